package partition

import (
	"context"
	"fmt"
	"io"
	"io/ioutil"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// Ring is the one ring the traffic changes and reads.
const Ring = "pt"

// newHTTPClient is a client that never goes through a proxy (the test
// talks to its own namespaces only) and keeps connections open.
func newHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
			MaxIdleConns:        64,
			MaxIdleConnsPerHost: 32,
			IdleConnTimeout:     30 * time.Second,
			DisableCompression:  true,
		},
	}
}

// StoreURL names every member, as `ringd serve --store` takes it.
func StoreURL() string {
	var hosts []string
	for _, m := range Members {
		hosts = append(hosts, m.ClientAddr()+":2379")
	}
	return "etcd://" + strings.Join(hosts, ",")
}

// StartRingd starts instance r from bin in its namespace, serving on its
// front address, on the etcd cluster, and waits until it says where it
// listens and its /readyz answers 200.
func StartRingd(bin string, r Instance, logDir string) (*Proc, error) {
	args := []string{
		"serve",
		"--listen", r.FrontAddr() + ":7420",
		"--store", StoreURL(),
		// A non-loopback address without an admin token: the front
		// network exists only inside this test.
		"--insecure",
		// Every version stays, so the history shows every change.
		"--retention", "1000000",
		"--instance-id", r.Name,
		"--advertise-url", r.URL(),
	}
	p, stdout, err := StartProc("ringd "+r.Name, r.NS(), filepath.Join(logDir, "ringd-"+r.Name+".log"),
		childEnv("RUST_LOG=info"), true, bin, args...)
	if err != nil {
		return nil, err
	}
	line, err := firstLine(stdout, 30*time.Second)
	if err != nil {
		return p, fmt.Errorf("ringd %s: %v; its log:\n%s", r.Name, err, tail(p.LogPath, 30))
	}
	if want := "ringd listening on " + r.URL(); line != want {
		return p, fmt.Errorf("ringd %s said %q, not %q", r.Name, line, want)
	}
	client := newHTTPClient(time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get(r.URL() + "/readyz")
		if err == nil {
			drain(resp)
			if resp.StatusCode == 200 {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			return p, fmt.Errorf("ringd %s not ready within 30 s; its log:\n%s", r.Name, tail(p.LogPath, 30))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// drain reads and closes a response body, so its connection is reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(ioutil.Discard, io.LimitReader(resp.Body, 64<<20))
	resp.Body.Close()
}

// CreateRing creates the ring through r, at version 1.
func CreateRing(client *http.Client, r Instance) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequest("PUT", r.URL()+"/v1/rings/"+Ring, strings.NewReader(`{}`))
	if err != nil {
		return err
	}
	req = req.WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	body, _ := ioutil.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("PUT /v1/rings/%s: %d %s", Ring, resp.StatusCode, body)
	}
	return nil
}
