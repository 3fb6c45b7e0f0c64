package partition

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a process the test started inside one of its namespaces, in a
// process group of its own, with its output appended to a log file.
type Proc struct {
	Name    string
	LogPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	mu      sync.Mutex
	err     error
	stopped bool
}

var (
	procsMu sync.Mutex
	procs   []*Proc
)

// childEnv is the test's environment without what would change what etcd
// or ringd do (their own variables) or where a client connects (proxies).
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name := kv
		if i := strings.Index(kv, "="); i >= 0 {
			name = kv[:i]
		}
		upper := strings.ToUpper(name)
		if strings.HasPrefix(upper, "RINGD_") || strings.HasPrefix(upper, "ETCD_") ||
			strings.HasSuffix(upper, "_PROXY") || upper == "RUST_LOG" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// StartProc runs bin with args inside namespace ns. Its stderr (and its
// stdout, unless stdout is asked for) goes to logPath; with wantStdout
// the caller gets its stdout to read (and must keep reading it).
func StartProc(name, ns, logPath string, env []string, wantStdout bool, bin string, args ...string) (*Proc, io.Reader, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	defer log.Close()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, bin}, args...)...)
	cmd.Env = env
	cmd.Stderr = log
	var stdout io.Reader
	if wantStdout {
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, err
		}
		stdout = pipe
	} else {
		cmd.Stdout = log
	}
	// Its own process group, so it can be killed whole; killed too if the
	// test process dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &Proc{Name: name, LogPath: logPath, cmd: cmd, exited: make(chan struct{})}
	procsMu.Lock()
	defer procsMu.Unlock()
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %v", name, err)
	}
	procs = append(procs, p)
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.exited)
	}()
	return p, stdout, nil
}

// Exited says whether the process ended without Stop, and how.
func (p *Proc) Exited() (bool, string) {
	select {
	case <-p.exited:
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.stopped {
			return false, ""
		}
		return true, fmt.Sprintf("%s exited: %v", p.Name, p.err)
	default:
		return false, ""
	}
}

// Stop kills the process group and waits (up to 5 s) for the process.
func (p *Proc) Stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
	}
}

// stopAllProcs stops every process the test started.
func stopAllProcs() {
	procsMu.Lock()
	all := append([]*Proc(nil), procs...)
	procs = nil
	procsMu.Unlock()
	for _, p := range all {
		p.Stop()
	}
}

// firstLine reads r's first line within limit and then keeps draining r,
// so the process never blocks on a full pipe.
func firstLine(r io.Reader, limit time.Duration) (string, error) {
	lines := make(chan string, 1)
	go func() {
		defer Guard("stdout reader")
		s := bufio.NewScanner(r)
		if s.Scan() {
			lines <- s.Text()
		} else {
			close(lines)
		}
		for s.Scan() {
		}
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			return "", fmt.Errorf("the process closed its output without a line")
		}
		return line, nil
	case <-time.After(limit):
		return "", fmt.Errorf("no line within %v", limit)
	}
}

// tail is the end of a log file, for failure messages.
func tail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
