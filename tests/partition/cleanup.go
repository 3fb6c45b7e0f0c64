package partition

import (
	"fmt"
	"io/ioutil"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Everything the test starts is undone by Cleanup, on every way out: the
// test's own end or failure (t.Cleanup), SIGINT, SIGTERM or SIGHUP
// (HandleSignals), a panic in one of its goroutines (Guard), and the
// internal deadline ahead of `go test -timeout` (Watchdog). Cleanup kills
// the processes the test started, then removes every namespace, link and
// directory named with Prefix, so it also removes what a crashed earlier
// run left behind.

var cleanupMu sync.Mutex

// dataRoots are the directories under which runs keep etcd's data.
func dataRoots() []string {
	roots := []string{os.TempDir()}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		roots = append([]string{"/dev/shm"}, roots...)
	}
	return roots
}

// Cleanup stops every process the test started and removes every
// namespace, link and directory named with Prefix. Safe to call any number
// of times, from any goroutine. Returns what it could not remove.
func Cleanup() []string {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	stopAllProcs()
	return RemoveLeftovers()
}

// RemoveLeftovers removes what a run, this one or an earlier one that was
// killed, made: the processes inside the Prefix namespaces (and only
// those), the namespaces, the links and the data directories.
func RemoveLeftovers() []string {
	var problems []string
	out, err := ip("netns", "list")
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], Prefix) {
			continue
		}
		ns := fields[0]
		killNamespace(ns)
		if _, err := ip("netns", "del", ns); err != nil {
			problems = append(problems, err.Error())
		}
	}
	out, err = ip("-o", "link", "show")
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		name := strings.TrimSuffix(fields[1], ":")
		if i := strings.Index(name, "@"); i >= 0 {
			name = name[:i]
		}
		if !strings.HasPrefix(name, Prefix) {
			continue
		}
		// A veth's host side goes with its namespace; it may be gone by now.
		if _, err := ip("link", "del", name); err != nil && !strings.Contains(err.Error(), "Cannot find device") {
			problems = append(problems, err.Error())
		}
	}
	for _, root := range dataRoots() {
		dirs, _ := filepath.Glob(filepath.Join(root, Prefix+"*"))
		for _, d := range dirs {
			if err := os.RemoveAll(d); err != nil {
				problems = append(problems, err.Error())
			}
		}
	}
	return problems
}

// killNamespace kills every process inside ns (as `ip netns pids` lists
// them) and waits up to 5 s for them to be gone.
func killNamespace(ns string) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := ip("netns", "pids", ns)
		if err != nil || strings.TrimSpace(out) == "" {
			return
		}
		for _, f := range strings.Fields(out) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// HandleSignals cleans up and exits on SIGINT, SIGTERM and SIGHUP.
func HandleSignals() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-ch
		fmt.Fprintf(os.Stderr, "\npartition: %v: removing the namespaces, links and processes\n", s)
		for _, p := range Cleanup() {
			fmt.Fprintf(os.Stderr, "partition: cleanup: %s\n", p)
		}
		os.Exit(130)
	}()
}

// Guard, deferred first in every goroutine the test starts, turns a panic
// there (which would end the process without running any deferred
// cleanup) into a cleanup and an exit.
func Guard(name string) {
	if r := recover(); r != nil {
		fmt.Fprintf(os.Stderr, "partition: panic in %s: %v\n%s", name, r, debug.Stack())
		for _, p := range Cleanup() {
			fmt.Fprintf(os.Stderr, "partition: cleanup: %s\n", p)
		}
		os.Exit(2)
	}
}

// Watchdog cleans up and exits at deadline, ahead of `go test -timeout`,
// whose panic would skip every deferred cleanup. Stop the returned timer
// when the test ends.
func Watchdog(deadline time.Time) *time.Timer {
	return time.AfterFunc(time.Until(deadline), func() {
		fmt.Fprintf(os.Stderr, "partition: the test ran into its deadline; cleaning up\n")
		for _, p := range Cleanup() {
			fmt.Fprintf(os.Stderr, "partition: cleanup: %s\n", p)
		}
		os.Exit(1)
	})
}

// makeDataDir makes this run's directory for etcd's data, on tmpfs where
// there is one (so disk stalls of a shared machine do not show up as
// ringd's latencies).
func makeDataDir() (string, error) {
	return ioutil.TempDir(dataRoots()[0], Prefix)
}
