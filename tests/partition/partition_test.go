package partition

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func TestMain(m *testing.M) {
	HandleSignals()
	code := m.Run()
	if os.Geteuid() == 0 {
		for _, p := range Cleanup() {
			fmt.Fprintf(os.Stderr, "partition: cleanup: %s\n", p)
		}
	}
	os.Exit(code)
}

// ringdBinary is RINGD_BIN, else the release build of this checkout.
func ringdBinary(t *testing.T) string {
	bin := os.Getenv("RINGD_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "target", "release", "ringd")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(abs); err != nil || st.IsDir() {
		t.Fatalf("no ringd binary at %s: build it with `cargo build --release --locked`, or set RINGD_BIN", abs)
	}
	return abs
}

// outDir is where a failed run leaves its logs and Porcupine's
// visualization: PARTITION_OUT, else out/ beside this file.
func outDir(t *testing.T) string {
	base := os.Getenv("PARTITION_OUT")
	if base == "" {
		base = "out"
	}
	dir, err := filepath.Abs(filepath.Join(base, time.Now().Format("20060102-150405")))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPartitions runs three etcd members and two ringd instances, each in
// a network namespace of its own, under writers and readers through both
// instances, through each fault of Schedule; then checks the whole
// history with Porcupine, the ring's history against every write, and the
// targets in thresholds.go, and prints the figures of every fault.
func TestPartitions(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the partition test makes network namespaces, veth pairs and bridges, which needs root: run it as root, or through .ci/partition")
	}
	bin := ringdBinary(t)
	for _, need := range []string{"ip", EtcdBinary} {
		if _, err := exec.LookPath(need); err != nil {
			t.Fatalf("%s is missing (%v): run .ci/setup --test", need, err)
		}
	}
	if deadline, ok := t.Deadline(); ok {
		// Ahead of `go test -timeout`, whose panic would leave everything.
		wd := Watchdog(deadline.Add(-30 * time.Second))
		defer wd.Stop()
	}
	if left := RemoveLeftovers(); len(left) > 0 {
		t.Fatalf("could not remove what an earlier run left: %s", strings.Join(left, "; "))
	}
	t.Cleanup(func() {
		for _, p := range Cleanup() {
			t.Errorf("cleanup: %s", p)
		}
	})
	out := outDir(t)
	keep := true
	defer func() {
		if keep || t.Failed() {
			fmt.Printf("logs (and on a linearizability failure Porcupine's visualization) are in %s\n", out)
		} else {
			os.RemoveAll(out)
		}
	}()
	data, err := makeDataDir()
	if err != nil {
		t.Fatal(err)
	}
	runID := fmt.Sprintf("%x", time.Now().UnixNano()&0xffffffffff)
	setupStart := time.Now()
	if err := BuildNetwork(); err != nil {
		t.Fatal(err)
	}
	etcdProcs, err := StartEtcd(data, out, Prefix+runID)
	if err != nil {
		t.Fatal(err)
	}
	etcdClient := newHTTPClient(time.Second)
	if _, _, err := WaitAgreedLeader(etcdClient, 30*time.Second); err != nil {
		t.Fatalf("%v; logs in %s", err, out)
	}
	var ringds []*Proc
	for _, r := range Instances {
		p, err := StartRingd(bin, r, out)
		if err != nil {
			t.Fatal(err)
		}
		ringds = append(ringds, p)
	}
	if err := CreateRing(newHTTPClient(10*time.Second), Instances[0]); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("3 etcd members and 2 ringd instances up in %.1f s (ringd %s)\n", time.Since(setupStart).Seconds(), bin)

	rec := NewRecorder(NewClock())
	traffic := NewTraffic(rec, runID)
	traffic.StartPolls()
	traffic.Start()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			traffic.Stop()
			traffic.StopPolls()
		}
	}
	defer stop()
	time.Sleep(Warmup)
	run := &runner{traffic: traffic, rec: rec, etcd: etcdClient}
	var eps []Episode
	all := append(append([]*Proc(nil), etcdProcs...), ringds...)
	for _, f := range Schedule {
		ep, err := run.run(f)
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, ep)
		fmt.Printf("%-48s heal after %.2f s; converged r1 +%s s, r2 +%s s after the heal\n", f.Name(),
			(ep.Heal - ep.Start).Seconds(), sinceHeal(ep.Converged[0], ep.Heal), sinceHeal(ep.Converged[1], ep.Heal))
		for _, p := range all {
			if dead, why := p.Exited(); dead {
				t.Fatalf("%s; its log:\n%s", why, tail(p.LogPath, 40))
			}
		}
	}
	stop()
	h := rec.Snapshot()
	a := Analyze(h, eps)
	fmt.Printf("\n%d writes (%d attempts), %d reads (%d marked stale), %d /readyz polls, %d etcd status polls\n",
		len(h.Writes), len(h.Attempts), len(h.Reads), countStale(h.Reads), len(h.Ready), len(h.Statuses))
	fmt.Printf("\n%s\n%s\n", a.Timeline(), a.FiguresTable())

	v := a.CheckAll()
	checkFinalState(t, v, h.Writes)
	lin := CheckLinearizable(h, eps, out)
	fmt.Printf("Porcupine: %s on %d operations in %.1f s\n", lin.Result, lin.Ops, lin.Took.Seconds())
	if lin.Result != porcupine.Ok {
		name := "linearizability (Porcupine)"
		for _, line := range lin.Offending {
			v.Add(name, "%s", line)
		}
		v.Head(name, "%s: the history of %d operations is not linearizable (visualization: %s)", lin.Result, lin.Ops, lin.Visualization)
	}
	for _, p := range all {
		if dead, why := p.Exited(); dead {
			v.Add("processes", "%s", why)
		}
	}
	for _, u := range run.unsteady {
		v.Add("steady before each fault", "%s", u)
	}
	keep = !v.Empty()
	if keep {
		if path, err := saveHistory(out, h, eps); err != nil {
			t.Errorf("saving the history: %v", err)
		} else {
			fmt.Printf("the recorded history (times in ns since the traffic began): %s\n", path)
		}
	}
	for _, name := range v.Names {
		lines := v.Lines[name]
		shown := lines
		if len(shown) > 20 {
			shown = shown[:20]
		}
		head, ok := v.Heads[name]
		if !ok {
			head = fmt.Sprintf("%d failures:", len(lines))
		}
		t.Errorf("%s: %s\n  %s", name, head, strings.Join(shown, "\n  "))
	}
	if lin.Visualization != "" {
		fmt.Printf("Porcupine's visualization: %s\n", lin.Visualization)
	}
}

// checkFinalState reads the history and the snapshot through both
// instances once they are current, checks r1's against the writes, and
// that r2 holds the same.
func checkFinalState(t *testing.T, v *Violations, writes []WriteOp) {
	client := newHTTPClient(30 * time.Second)
	type state struct {
		entries []HistoryEntry
		version int64
		nodes   map[string]string
	}
	var states []state
	for _, inst := range Instances {
		var s state
		var err error
		deadline := time.Now().Add(ConvergeLimit)
		for {
			s.entries, err = FetchHistory(client, inst)
			if err == nil {
				s.version, s.nodes, err = FetchNodes(client, inst)
			}
			if err == nil && s.version == int64(len(s.entries)) || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			v.Add(CheckSame, "%s: %v", inst.Name, err)
			return
		}
		states = append(states, s)
	}
	CheckHistory(v, states[0].entries, states[0].version, states[0].nodes, writes)
	if !reflect.DeepEqual(states[0], states[1]) {
		v.Add(CheckSame, "r1 (history of %d entries, snapshot at version %d) and r2 (%d entries, version %d) differ",
			len(states[0].entries), states[0].version, len(states[1].entries), states[1].version)
	}
}

// saveHistory writes everything the run recorded as JSON into dir, for
// looking into a failure.
func saveHistory(dir string, h History, eps []Episode) (string, error) {
	data, err := json.Marshal(struct {
		History  History
		Episodes []Episode
	}{h, eps})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "history.json")
	return path, os.WriteFile(path, data, 0o644)
}

func countStale(reads []ReadOp) int {
	n := 0
	for _, r := range reads {
		if r.OK() && r.Stale {
			n++
		}
	}
	return n
}
