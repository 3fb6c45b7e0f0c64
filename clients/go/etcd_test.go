package ringd

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startEtcd starts a single-member etcd on free loopback ports with a
// temporary data directory, as the Rust tests do (tests/support/etcd.rs),
// waits until it answers, and returns the store URL `ringd serve --store`
// takes (etcd://127.0.0.1:PORT). It kills etcd when the test ends. The
// test skips when no `etcd` is on PATH: unlike the Rust etcd tests, which
// exist for the etcd store, these exist for the client, and SQLite already
// runs the same checks.
func startEtcd(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		t.Skipf("no etcd on PATH: %v", err)
	}
	dir := t.TempDir()
	client, peer := freePort(t), freePort(t)
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", client)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	cmd := exec.Command(bin,
		"--name=test",
		"--data-dir="+filepath.Join(dir, "data"),
		"--listen-client-urls="+clientURL,
		"--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=test="+peerURL,
		"--logger=zap", "--log-level=warn")
	logPath := filepath.Join(dir, "etcd.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	// /health answers {"health":"true"} once the member has a leader and
	// serves requests; until then ringd could not open its store.
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			text, _ := os.ReadFile(logPath)
			t.Fatalf("etcd exited: %v\n%s", err, text)
		default:
		}
		if resp, err := http.Get(clientURL + "/health"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"true"`) {
				return fmt.Sprintf("etcd://127.0.0.1:%d", client)
			}
		}
		if time.Now().After(deadline) {
			text, _ := os.ReadFile(logPath)
			t.Fatalf("etcd did not answer within 30 s:\n%s", text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort is a loopback port nobody listens on right now. Another
// process could take it before etcd binds it; that is rare and shows up
// as a start-up failure naming the port, not as a wrong result.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
