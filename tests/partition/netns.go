package partition

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// ip runs `ip ARGS…` and returns its output; an error carries the output.
func ip(args ...string) (string, error) {
	cmd := exec.Command("ip", args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// checkAddressesFree refuses to build the networks when this machine
// already uses 10.77.0.0/16 outside the test's own links: the test must
// never send traffic anywhere but to the namespaces it made.
func checkAddressesFree() error {
	out, err := ip("-o", "addr", "show")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 4 || strings.HasPrefix(fields[1], Prefix) {
			continue
		}
		if strings.Contains(line, " 10.77.") {
			return fmt.Errorf("10.77.0.0/16 is already in use on this machine (%s); the test needs it for its own namespaces", strings.TrimSpace(line))
		}
	}
	out, err = ip("-o", "route", "show")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "10.77.") && !strings.Contains(line, " dev "+Prefix) {
			return fmt.Errorf("a route to 10.77.0.0/16 exists already (%s); the test needs it for its own namespaces", strings.TrimSpace(line))
		}
	}
	return nil
}

// BuildNetwork makes the three bridges, a namespace per etcd member and
// ringd instance, and their veth pairs (see topology.go). Everything it
// makes is named with Prefix; RemoveLeftovers removes it all.
func BuildNetwork() error {
	if err := checkAddressesFree(); err != nil {
		return err
	}
	for _, br := range []string{BridgePeer, BridgeClient, BridgeFront} {
		if _, err := ip("link", "add", br, "type", "bridge", "stp_state", "0", "forward_delay", "0"); err != nil {
			return err
		}
		if _, err := ip("link", "set", br, "up"); err != nil {
			return err
		}
	}
	if _, err := ip("addr", "add", HostClientAddr+"/24", "dev", BridgeClient); err != nil {
		return err
	}
	if _, err := ip("addr", "add", HostFrontAddr+"/24", "dev", BridgeFront); err != nil {
		return err
	}
	for _, m := range Members {
		if err := addNamespace(m.NS()); err != nil {
			return err
		}
		if err := addVeth(m.NS(), m.PeerLink(), InnerPeer, BridgePeer, m.PeerAddr()); err != nil {
			return err
		}
		if err := addVeth(m.NS(), m.ClientLink(), InnerClient, BridgeClient, m.ClientAddr()); err != nil {
			return err
		}
	}
	for _, r := range Instances {
		if err := addNamespace(r.NS()); err != nil {
			return err
		}
		if err := addVeth(r.NS(), r.ClientLink(), InnerClient, BridgeClient, r.ClientAddr()); err != nil {
			return err
		}
		if err := addVeth(r.NS(), r.FrontLink(), InnerFront, BridgeFront, r.FrontAddr()); err != nil {
			return err
		}
	}
	return nil
}

func addNamespace(ns string) error {
	if _, err := ip("netns", "add", ns); err != nil {
		return err
	}
	_, err := ip("-n", ns, "link", "set", "lo", "up")
	return err
}

// addVeth makes a veth pair: host on bridge in the test's namespace, inner
// in ns with addr/24.
func addVeth(ns, host, inner, bridge, addr string) error {
	steps := [][]string{
		{"link", "add", host, "type", "veth", "peer", "name", inner, "netns", ns},
		{"link", "set", host, "master", bridge},
		{"link", "set", host, "up"},
		{"-n", ns, "addr", "add", addr + "/24", "dev", inner},
		{"-n", ns, "link", "set", inner, "up"},
	}
	for _, s := range steps {
		if _, err := ip(s...); err != nil {
			return err
		}
	}
	return nil
}

// SetLink sets a host-side link up or down: down, its namespace loses the
// network behind it, with no reset sent to anyone (packets just vanish).
func SetLink(link string, up bool) error {
	state := "down"
	if up {
		state = "up"
	}
	_, err := ip("link", "set", link, state)
	return err
}

// Blackhole makes ns drop everything it sends to addr (or, with add false,
// stops doing so). Set on both ends, it cuts one pair of hosts while each
// keeps every other path.
func Blackhole(ns, addr string, add bool) error {
	verb := "del"
	if add {
		verb = "add"
	}
	_, err := ip("-n", ns, "route", verb, "blackhole", addr+"/32")
	return err
}
