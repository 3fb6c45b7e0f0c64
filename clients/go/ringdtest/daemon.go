package ringdtest

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Daemon is a server process a test routes keys to (redis-server,
// memcached), listening on a loopback port.
type Daemon struct {
	// Addr is where it listens, 127.0.0.1:PORT.
	Addr string
	// Port is its port.
	Port   int
	cmd    *exec.Cmd
	exited chan struct{}
}

// Stop kills the daemon now (SIGKILL) and waits for it to exit; a test
// uses it to take a server down under its clients. Safe to call again.
func (d *Daemon) Stop() {
	_ = d.cmd.Process.Kill()
	<-d.exited
}

// StartDaemon runs bin with the arguments args(port) on a free loopback
// port and waits until that port accepts connections. It tries another
// port when the process exits first (another process may have taken the
// port between the probe and the start), up to three times, and kills
// the process when the test ends. It skips the test when bin is not
// installed.
func StartDaemon(t testing.TB, bin string, args func(port int) []string) *Daemon {
	t.Helper()
	if _, err := exec.LookPath(bin); err != nil {
		t.Skipf("%s is not installed (Debian: apt-get install %s): %v", bin, bin, err)
	}
	var lastOut []byte
	for attempt := 0; attempt < 3; attempt++ {
		port := FreePort(t)
		cmd := exec.Command(bin, args(port)...)
		cmd.Env = childEnv()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", bin, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if waitListening(addr, exited, 10*time.Second) {
			d := &Daemon{Addr: addr, Port: port, cmd: cmd, exited: exited}
			t.Cleanup(d.Stop)
			return d
		}
		_ = cmd.Process.Kill()
		<-exited
		lastOut = out.Bytes()
	}
	t.Fatalf("%s did not listen after three tries; its last output:\n%s", bin, lastOut)
	return nil
}

// waitListening dials addr until it answers (true), the process exits or
// d passes (false).
func waitListening(addr string, exited <-chan struct{}, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			_ = c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// FreePort is a loopback TCP port nothing listened on a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Redis starts redis-server on a free loopback port, with persistence
// off, and stops it when the test ends.
func Redis(t testing.TB) *Daemon {
	t.Helper()
	return StartDaemon(t, "redis-server", func(port int) []string {
		return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", t.TempDir()}
	})
}

// Memcached starts memcached on a free loopback port (TCP only) and stops
// it when the test ends; as root it runs as root (-u root), which
// memcached otherwise refuses.
func Memcached(t testing.TB) *Daemon {
	t.Helper()
	return StartDaemon(t, "memcached", func(port int) []string {
		args := []string{"-p", strconv.Itoa(port), "-l", "127.0.0.1", "-U", "0", "-m", "64"}
		if os.Geteuid() == 0 {
			args = append(args, "-u", "root")
		}
		return args
	})
}
