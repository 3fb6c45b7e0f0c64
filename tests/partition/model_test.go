package partition

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// The checks must be able to fail: each is run here on small histories
// made by hand, ones that break what it checks and ones that do not.

func write(client int, key string, call, ret int64, version int64) porcupine.Operation {
	op := porcupine.Operation{ClientId: client, Input: linInput{Write: true, Key: key}, Call: call,
		Output: linOutput{Version: version}, Return: ret}
	if ret == math.MaxInt64 {
		op.Output = linOutput{Unknown: true}
	}
	return op
}

func read(client, instance int, call, ret int64, version int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: linInput{Instance: instance, Path: "snapshot"}, Call: call,
		Output: linOutput{Version: version}, Return: ret}
}

func TestModelAcceptsALinearizableHistory(t *testing.T) {
	ops := []porcupine.Operation{
		write(0, "a", 0, 10, 2),
		read(1, 0, 0, 5, 1),
		read(1, 0, 12, 15, 2),
		write(0, "b", 20, 30, 3),
		read(2, 1, 25, 40, 3), // concurrent with the write it sees
		read(1, 0, 26, 28, 2), // concurrent with it, linearized before
		write(3, "c", 35, math.MaxInt64, 0),
		read(2, 1, 50, 60, 4), // the unknown write happened
		write(0, "d", 70, 80, 5),
	}
	if res := porcupine.CheckOperations(VersionModel, ops); !res {
		t.Fatal("a linearizable history was refused")
	}
}

func TestModelAcceptsAnUnknownWriteThatNeverHappened(t *testing.T) {
	ops := []porcupine.Operation{
		write(0, "a", 0, math.MaxInt64, 0),
		read(1, 0, 10, 20, 1),
		write(2, "b", 30, 40, 2),
		read(1, 0, 50, 60, 2),
	}
	if !porcupine.CheckOperations(VersionModel, ops) {
		t.Fatal("an unknown write placed last was refused")
	}
}

func TestModelRefusesAStaleRead(t *testing.T) {
	ops := []porcupine.Operation{
		write(0, "a", 0, 10, 2),
		read(1, 0, 20, 30, 1),
	}
	res, info := porcupine.CheckOperationsVerbose(VersionModel, ops, time.Second)
	if res != porcupine.Illegal {
		t.Fatalf("a read behind an acknowledged write: %s", res)
	}
	lines := strings.Join(offending(info, ops), "\n")
	if !strings.Contains(lines, "r1 snapshot → v1 [0.000 s – 0.000 s]") {
		t.Fatalf("the stale read is not named:\n%s", lines)
	}
}

func TestModelRefusesReadsThatGoBack(t *testing.T) {
	// Version 3's write is not acknowledged until 100, so neither read is
	// behind an acknowledged write; but once r1 answered 3, r2 cannot
	// answer 2 later.
	ops := []porcupine.Operation{
		write(0, "a", 0, 10, 2),
		write(1, "b", 15, 100, 3),
		read(2, 0, 20, 30, 3),
		read(3, 1, 40, 50, 2),
	}
	if porcupine.CheckOperations(VersionModel, ops) {
		t.Fatal("reads going back across instances were accepted")
	}
}

func TestModelRefusesAVersionWithoutItsWrite(t *testing.T) {
	ops := []porcupine.Operation{
		write(0, "a", 0, 10, 3),
	}
	if porcupine.CheckOperations(VersionModel, ops) {
		t.Fatal("version 3 from the only write was accepted")
	}
}

func TestModelRefusesTwoWritesOfOneVersion(t *testing.T) {
	ops := []porcupine.Operation{
		write(0, "a", 0, 10, 2),
		write(1, "b", 0, 10, 2),
	}
	if porcupine.CheckOperations(VersionModel, ops) {
		t.Fatal("two writes acknowledged with one version were accepted")
	}
}

func TestOperationsLeaveOutStaleAndFailedReads(t *testing.T) {
	h := History{
		Writes: []WriteOp{{Client: 0, Key: "a", Invoke: 0, Complete: Never}},
		Reads: []ReadOp{
			{Client: 1, Status: 200, Version: 1, Invoke: 1, Complete: 2},
			{Client: 1, Status: 200, Version: 1, Stale: true, Invoke: 3, Complete: 4},
			{Client: 1, Status: 503, Err: "503", Invoke: 5, Complete: 6},
			{Client: 1, Status: 304, Version: 1, Path: "longpoll", Invoke: 7, Complete: 8},
		},
	}
	ops := Operations(h)
	if len(ops) != 3 {
		t.Fatalf("%d operations, want the write, the unmarked read and the 304", len(ops))
	}
	if ops[0].Return != math.MaxInt64 || !ops[0].Output.(linOutput).Unknown {
		t.Fatalf("an unanswered write is %+v, not unknown at infinity", ops[0])
	}
}

func entry(v int64, key, node, address string) HistoryEntry {
	var e HistoryEntry
	e.Version = v
	if key != "" {
		k := key
		e.IdempotencyKey = &k
		a := address
		e.Ops = append(e.Ops, struct {
			Op   string `json:"op"`
			Node *struct {
				ID      string  `json:"id"`
				Address *string `json:"address"`
			} `json:"node"`
		}{Op: "upsert", Node: &struct {
			ID      string  `json:"id"`
			Address *string `json:"address"`
		}{ID: node, Address: &a}})
	}
	return e
}

func historyViolations(entries []HistoryEntry, version int64, nodes map[string]string, writes []WriteOp) []string {
	v := &Violations{}
	CheckHistory(v, entries, version, nodes, writes)
	return v.Lines[CheckExactlyOnce]
}

func TestHistoryCheck(t *testing.T) {
	writes := []WriteOp{
		{ID: 0, Client: 0, Key: "a", Node: "n0", Acked: true, Version: 2},
		{ID: 1, Client: 0, Key: "b", Node: "n1", Acked: true, Version: 3},
		{ID: 2, Client: 1, Key: "c", Node: "n2"}, // unknown
	}
	good := []HistoryEntry{entry(1, "", "", ""), entry(2, "a", "n0", "a"), entry(3, "b", "n1", "b")}
	nodes := map[string]string{"n0": "a", "n1": "b"}
	if got := historyViolations(good, 3, nodes, writes); len(got) != 0 {
		t.Fatalf("a correct history: %v", got)
	}
	withC := append(append([]HistoryEntry(nil), good...), entry(4, "c", "n2", "c"))
	if got := historyViolations(withC, 4, map[string]string{"n0": "a", "n1": "b", "n2": "c"}, writes); len(got) != 0 {
		t.Fatalf("an unknown write applied once: %v", got)
	}
	cases := []struct {
		name    string
		entries []HistoryEntry
		version int64
		nodes   map[string]string
		want    string
	}{
		{"applied twice", append(append([]HistoryEntry(nil), good...), entry(4, "b", "n1", "b")), 4, nodes, "applied twice"},
		{"lost", good[:2], 2, map[string]string{"n0": "a"}, "not in the history (lost)"},
		{"another change", []HistoryEntry{good[0], good[1], entry(3, "b", "n1", "x")}, 3, nodes, "not the upsert"},
		{"reordered", []HistoryEntry{good[0], entry(2, "b", "n1", "b"), entry(3, "a", "n0", "a")}, 3, nodes, "reordered"},
		{"gap", []HistoryEntry{good[0], good[2]}, 3, nodes, "versions are not 1, 2, 3"},
		{"foreign", append(append([]HistoryEntry(nil), good...), entry(4, "z", "n9", "z")), 4, nodes, "which no writer sent"},
		{"snapshot", good, 3, map[string]string{"n0": "a", "n1": "a"}, "snapshot's nodes"},
		{"snapshot version", good, 2, nodes, "snapshot is at version 2"},
	}
	for _, c := range cases {
		got := strings.Join(historyViolations(c.entries, c.version, c.nodes, writes), "\n")
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: want %q among:\n%s", c.name, c.want, got)
		}
	}
}

// analysis builds an Analysis of one episode [10 s, 30 s], healed at 20 s,
// with r1 converged at 21 s and r2 at 20.1 s, etcd always led.
func analysis(h History) *Analysis {
	s := time.Second
	eps := []Episode{{Fault: Schedule[1], Start: 10 * s, Heal: 20 * s, End: 30 * s, Converged: [2]time.Duration{21 * s, 20*s + 100*time.Millisecond}}}
	h.Statuses = []StatusPoll{{Member: 0, Done: 5 * s, OK: true, Status: MemberStatus{MemberID: 7, Leader: 7}}}
	return Analyze(h, eps)
}

func TestBehindAndDue(t *testing.T) {
	s := time.Second
	a := analysis(History{Writes: []WriteOp{
		{Key: "a", Acked: true, Version: 2, Complete: 1 * s},
		{Key: "b", Acked: true, Version: 3, Complete: 2 * s},
		{Key: "c", Acked: true, Version: 4, Complete: 5 * s},
	}})
	if d := a.Due(2 * s); d != 2 {
		t.Fatalf("due at 2 s: %d, want 2 (version 3 completed at 2 s, not before)", d)
	}
	versions, age := a.Behind(2, 6*s)
	if versions != 2 || age != 4*s {
		t.Fatalf("version 2 read at 6 s: %d versions, %v behind; want 2 and 4 s", versions, age)
	}
	if versions, _ := a.Behind(4, 6*s); versions != 0 {
		t.Fatalf("a current read is %d behind", versions)
	}
}

func TestLeaderAgain(t *testing.T) {
	s := time.Second
	led := MemberStatus{MemberID: 7, Leader: 7}
	none := MemberStatus{MemberID: 7}
	h := History{Statuses: []StatusPoll{
		{Member: 0, Done: 19 * s, OK: true, Status: led},
		{Member: 0, Done: 20*s + 200*time.Millisecond, OK: true, Status: none},
		{Member: 0, Done: 20*s + 500*time.Millisecond, OK: true, Status: led},
	}}
	eps := []Episode{{Start: 10 * s, Heal: 20 * s, End: 30 * s, Converged: [2]time.Duration{21 * s, 20 * s}}}
	a := Analyze(h, eps)
	if got := a.LeaderAgain(0, 0); got != 20*s+500*time.Millisecond {
		t.Fatalf("r1: leader again at %v, want 20.5 s (etcd lost its leader after the heal)", got)
	}
	if got := a.LeaderAgain(0, 1); got != 20*s {
		t.Fatalf("r2: leader again at %v, want the heal (it converged before the loss)", got)
	}
}

func TestWriteChecks(t *testing.T) {
	s := time.Second
	ms := time.Millisecond
	h := History{
		Writes: []WriteOp{
			{ID: 0, Key: "known-slow", Acked: true, Version: 2, Invoke: 12 * s, Complete: 21 * s},
			{ID: 1, Key: "outside", Acked: true, Version: 3, Invoke: 40 * s, Complete: 41 * s},
			{ID: 2, Key: "no-retry-after", Acked: true, Version: 4, Invoke: 13 * s, Complete: 15 * s},
			{ID: 3, Key: "never", Invoke: 50 * s, Complete: Never},
			{ID: 4, Key: "turned-current", Acked: true, Version: 5, Invoke: 30*s + 20*ms, Complete: 31*s + 400*ms},
		},
		Attempts: []Attempt{
			// Sent once /readyz said 503; answered 1.5 s later with 503.
			{Op: 0, Sent: 12 * s, Done: 13*s + 500*ms, Status: 503, RetryAfter: "1"},
			// Sent before the heal, succeeded after it: waited 5 s.
			{Op: 0, Sent: 16 * s, Done: 21 * s, Status: 200, Version: 2},
			{Op: 1, Sent: 40 * s, Done: 40*s + 10*ms, Status: 503, RetryAfter: "1"},
			// In flight when the fault began: inside it.
			{Op: 1, Sent: 9 * s, Done: 10*s + 10*ms, Status: 503, RetryAfter: "1"},
			{Op: 1, Sent: 41 * s, Done: 41 * s, Status: 200, Version: 3},
			{Op: 2, Sent: 14 * s, Done: 14*s + 100*ms, Status: 503},
			{Op: 2, Sent: 15 * s, Done: 15 * s, Status: 200, Version: 4},
			// Sent after a 503 poll, but the instance was current again by
			// the next poll: a current instance's deadline applies.
			{Op: 4, Sent: 30*s + 20*ms, Done: 31*s + 400*ms, Status: 200, Version: 5},
		},
		Ready: []ReadyPoll{
			{Instance: 0, Sent: 11 * s, Done: 11 * s, Status: 503},
			{Instance: 0, Sent: 12*s + 10*ms, Done: 12*s + 10*ms, Status: 503},
			{Instance: 0, Sent: 21 * s, Done: 21 * s, Status: 200},
			{Instance: 0, Sent: 30 * s, Done: 30 * s, Status: 503},
			{Instance: 0, Sent: 30*s + 50*ms, Done: 30*s + 50*ms, Status: 200},
		},
	}
	v := analysis(h).CheckAll()
	want := map[string]string{
		CheckKnown:        "known-slow sent at 12.000 s",
		CheckWorst:        "known-slow sent at 16.000 s",
		CheckWaited:       "known-slow sent at 16.000 s (r1 cut from etcd #1, -4.000 s from the heal) succeeded 1.000 s after the heal",
		CheckOutside:      "outside sent at 40.000 s",
		CheckRetryAfter:   "no-retry-after sent at 14.000 s",
		CheckWriteAnswers: "never invoked at 50.000 s",
	}
	for check, line := range want {
		if !strings.Contains(strings.Join(v.Lines[check], "\n"), line) {
			t.Errorf("%s: want %q among %q", check, line, v.Lines[check])
		}
	}
	if got := v.Lines[CheckKnown]; len(got) != 1 {
		t.Errorf("writes over the known bound: %q, want only known-slow", got)
	}
	if got := v.Lines[CheckOutside]; len(got) != 1 {
		t.Errorf("503s outside faults: %q, want only the one at 40 s", got)
	}
}

func TestConvergenceCheck(t *testing.T) {
	a := analysis(History{})
	lines := a.CheckAll().Lines[CheckConvergence]
	if len(lines) != 0 {
		t.Fatalf("1 s and 0.1 s after etcd had a leader: %q", lines)
	}
	a.Episodes[0].Converged[0] = 23 * time.Second
	a = Analyze(a.H, a.Episodes)
	lines = a.CheckAll().Lines[CheckConvergence]
	if len(lines) != 1 || !strings.Contains(lines[0], "r1 converged 3.000 s after etcd had a leader again") {
		t.Fatalf("3 s after etcd had a leader: %q", lines)
	}
}

func TestUnmarkedBehindCheck(t *testing.T) {
	s := time.Second
	h := History{
		Writes: []WriteOp{{Key: "a", Acked: true, Version: 2, Invoke: 0, Complete: 1 * s}},
		Reads: []ReadOp{
			{Instance: 0, Path: "lookup", Status: 200, Version: 1, Invoke: 2 * s, Complete: 2 * s},
			{Instance: 1, Path: "lookup", Status: 200, Version: 1, Stale: true, Invoke: 2 * s, Complete: 2 * s},
			{Instance: 1, Path: "lookup", Status: 200, Version: 1, Invoke: 500 * time.Millisecond, Complete: 2 * s},
		},
	}
	v := analysis(h).CheckAll()
	lines := v.Lines[CheckBehind]
	if len(lines) != 1 || !strings.Contains(lines[0], "r1 lookup invoked at 2.000 s (no fault) answered version 1 unmarked, 1 behind; version 2 had been acknowledged 1.000 s before") {
		t.Fatalf("%q", lines)
	}
	if head := v.Heads[CheckBehind]; head != "1 in all, 0 during faults (up to 0.000 s behind), 1 in steady traffic (up to 1.000 s behind); the furthest behind first:" {
		t.Fatalf("%q", head)
	}
}

func TestReadVersion(t *testing.T) {
	h := http.Header{}
	h.Set("ETag", `"7"`)
	if v, err := readVersion("snapshot", h, []byte(`{"version":7}`), 0); v != 7 || err != nil {
		t.Fatalf("snapshot: %d %v", v, err)
	}
	if _, err := readVersion("snapshot", h, []byte(`{"version":6}`), 0); err == nil {
		t.Fatal("an ETag and a body that disagree were accepted")
	}
	if v, err := readVersion("longpoll", h, nil, 7); v != 7 || err != nil {
		t.Fatalf("a long-poll's 304: %d %v", v, err)
	}
	if _, err := readVersion("longpoll", h, nil, 5); err == nil {
		t.Fatal("a 304 naming another version than asked was accepted")
	}
	if v, err := readVersion("history", http.Header{}, []byte(`{"entries":[{"version":1},{"version":2}]}`), 0); v != 2 || err != nil {
		t.Fatalf("history: %d %v", v, err)
	}
	if _, err := readVersion("lookup", http.Header{}, []byte(`{"owner":"a"}`), 0); err == nil {
		t.Fatal("a lookup without a version was accepted")
	}
}

func TestLongestGap(t *testing.T) {
	s := time.Second
	ts := []time.Duration{1 * s, 2 * s, 9 * s, 10 * s, 13 * s, 33 * s}
	if g := longestGap(ts, 5*s, 12*s); g != 7*s {
		t.Fatalf("gap across [5 s, 12 s]: %v, want 7 s", g)
	}
	if g := longestGap(ts, 14*s, 15*s); g != 20*s {
		t.Fatalf("gap spanning [14 s, 15 s]: %v, want 20 s", g)
	}
}

func TestReadyFor(t *testing.T) {
	s := time.Second
	rec := NewRecorder(NewClock())
	if got := rec.ReadyFor(0); got != 0 {
		t.Fatalf("no poll yet: %v", got)
	}
	rec.AddReady(ReadyPoll{Instance: 0, Done: 1 * s, Status: 200})
	rec.AddReady(ReadyPoll{Instance: 0, Done: 2 * s, Status: 503})
	rec.AddReady(ReadyPoll{Instance: 1, Done: 3 * s, Status: 503})
	rec.AddReady(ReadyPoll{Instance: 0, Done: 3 * s, Status: 200})
	rec.AddReady(ReadyPoll{Instance: 0, Done: 4 * s, Status: 200})
	if got := rec.ReadyFor(0); got != 2*s {
		t.Fatalf("r1 ready since its 503 at 2 s, last polled at 4 s: %v", got)
	}
	if got := rec.ReadyFor(1); got != 0 {
		t.Fatalf("r2 last answered 503: %v", got)
	}
}
