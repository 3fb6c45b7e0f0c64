package placement

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// twemproxyDefaultPort is the port on which nutcracker names an unnamed
// server by its host alone (5.9.2).
const twemproxyDefaultPort = 11211

// twemproxyLayout is nutcracker's continuum (5.9): equal points stay in
// server-name order, not node index order, and the body starts with the
// hash tag.
type twemproxyLayout struct {
	circle
	tag string
}

func (l *twemproxyLayout) appendBody(dst []byte) []byte {
	dst = append(dst, byte(len(l.tag)))
	dst = append(dst, l.tag...)
	return l.appendPoints(dst)
}

// buildTwemproxy takes the servers in name order (shorter names first,
// then bytes), gives each count/4 digests of name ‖ "-" ‖ decimal(k) as
// ketama does, and sorts the points by position with a stable sort, as
// glibc's qsort (a merge sort) does, so equal positions keep name order.
func buildTwemproxy(active []Node, names []string, tag string) *twemproxyLayout {
	counts := twemproxyPointCounts(active)
	order := make([]int, len(active))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareServerNames(names[a], names[b]) })
	var points []point
	for _, i := range order {
		points = appendDigestPoints(points, names[i], counts[i]/4, uint32(i))
	}
	slices.SortStableFunc(points, func(a, b point) int { return cmp.Compare(a.pos, b.pos) })
	return &twemproxyLayout{circle{newContinuum(points, 32)}, tag}
}

// compareServerNames is nutcracker's server order: by length, then bytes.
func compareServerNames(a, b string) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// twemproxyPointCounts is every active node's point count in index order:
// 4 × floor(f32(f32(pct × 160) / 4) × f32(n)), pct = f32(w) / f32(T),
// every step binary32 as nutcracker's float arithmetic (5.9.1). nutcracker
// adds 1e-10 in binary64 before the floor; that never changes the result,
// but it is kept to follow the C code step by step.
func twemproxyPointCounts(active []Node) []int {
	var total uint64
	for _, n := range active {
		total += uint64(n.Weight)
	}
	out := make([]int, len(active))
	for i, n := range active {
		pct := float32(n.Weight) / float32(total)
		perHash := float32(float32(float32(pct*160)/4) * float32(len(active)))
		out[i] = 4 * int(math.Floor(float64(float32(float64(perHash)+1e-10))))
	}
	return out
}

// twemproxySplitAddress reads host:port as nutcracker does: a host name
// or IPv4 address of [A-Za-z0-9._-] and a port 1..=65,535 without leading
// zeros; else it says why not.
func twemproxySplitAddress(address string) (host string, port int, problem string) {
	i := strings.LastIndexByte(address, ':')
	if i < 0 {
		return "", 0, "twemproxy rings need `host:port`"
	}
	host, p := address[:i], address[i+1:]
	if host == "" || !isHostName(host) {
		return "", 0, "the host must be a host name or an IPv4 address (letters, digits, '.', '-', '_')"
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || p[0] == '0' || p[0] == '+' || n == 0 {
		return "", 0, "the port must be from 1 to 65535, without leading zeros"
	}
	return host, int(n), ""
}

// serverName is the name nutcracker places n by (5.9.2): its hash_key,
// else its host alone on port 11211, else host:port; "" with neither an
// address nor a hash_key. It checks the address (AddressNotServer), then
// the name (InvalidServerName): printable ASCII without '#', quotes or
// backslashes, so YAML reads it back as written.
func serverName(n *Node) (string, error) {
	var host string
	var port int
	if n.Address != "" {
		var problem string
		if host, port, problem = twemproxySplitAddress(n.Address); problem != "" {
			return "", errorf(ErrAddressNotServer, "node %s at %q: %s", n.ID, excerpt(n.Address), problem)
		}
	}
	if n.HashKey != "" {
		for i := 0; i < len(n.HashKey); i++ {
			c := n.HashKey[i]
			if c < '!' || c > '~' || c == '#' || c == '"' || c == '\'' || c == '\\' {
				return "", errorf(ErrInvalidServerName, "node %s has hash_key %q: a twemproxy server name is printable ASCII without spaces, '#', quotes or backslashes", n.ID, excerpt(n.HashKey))
			}
		}
		return n.HashKey, nil
	}
	if host == "" {
		return "", nil
	}
	if port == twemproxyDefaultPort {
		return host, nil
	}
	return host + ":" + strconv.Itoa(port), nil
}

// serverNames is the active nodes' names in index order, checked: every
// one has a name and no two share one (ServerNameTaken, naming the field
// to change: hash_key if either node has one, else address).
func serverNames(active []Node) ([]string, error) {
	names := make([]string, len(active))
	for i := range active {
		name, err := serverName(&active[i])
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, errorf(ErrMissingAddress, "node %s under twemproxy", active[i].ID)
		}
		names[i] = name
	}
	order := make([]int, len(active))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return compareServerNames(names[a], names[b]) })
	for k := 1; k < len(order); k++ {
		a, b := order[k-1], order[k]
		if names[a] == names[b] {
			field := "address"
			if active[a].HashKey != "" || active[b].HashKey != "" {
				field = "hash_key"
			}
			return nil, errorf(ErrServerNameTaken, "%s and %s would both be the twemproxy server %q: give one a distinct %s", active[a].ID, active[b].ID, names[a], field)
		}
	}
	return names, nil
}

// taggedKey is the part of key nutcracker hashes (5.9.3): with a tag of
// characters o and c, the bytes after the first o and before the first c
// after it, when both are found and the bytes between are not empty;
// otherwise the whole key.
func taggedKey(tag string, key []byte) []byte {
	if tag == "" {
		return key
	}
	start := bytes.IndexByte(key, tag[0])
	if start < 0 {
		return key
	}
	end := bytes.IndexByte(key[start+1:], tag[1])
	if end <= 0 {
		return key
	}
	return key[start+1 : start+1+end]
}
