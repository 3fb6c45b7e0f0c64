package partition

import (
	"sort"
	"sync"
	"time"
)

// Clock gives every record one time base: the monotonic time since the
// run started.
type Clock struct{ start time.Time }

// NewClock starts a clock now.
func NewClock() Clock { return Clock{start: time.Now()} }

// Now is the time since the clock started.
func (c Clock) Now() time.Duration { return time.Since(c.start) }

// Never stands for "no time": an operation that never got an answer, an
// instance that never converged.
const Never = time.Duration(1<<63 - 1)

// WriteOp is one change a writer made: one Idempotency-Key, sent until it
// was acknowledged (each try an Attempt), with the first try's time as its
// invocation.
type WriteOp struct {
	ID       int
	Client   int // the writer; also Porcupine's client id
	Instance int
	Key      string
	Node     string
	Invoke   time.Duration
	Complete time.Duration // Never when the outcome is unknown
	Acked    bool
	Version  int64
	Replayed bool
	// Refused is a status other than 200 and 503: a defect, reported.
	Refused string
}

// Attempt is one HTTP request of a WriteOp.
type Attempt struct {
	Op         int
	Instance   int
	Sent, Done time.Duration
	Status     int    // 0: no answer (timeout or connection error)
	Err        string // what went wrong, when it did
	RetryAfter string
	Version    int64
}

// Latency is from sending the attempt to its answer.
func (a Attempt) Latency() time.Duration { return a.Done - a.Sent }

// ReadOp is one read of the ring through one of the read paths.
type ReadOp struct {
	Client   int
	Instance int
	Path     string
	Invoke   time.Duration
	Complete time.Duration
	Status   int // 0: no answer
	Version  int64
	Stale    bool // answered with Ringd-Stale: true
	Err      string
}

// OK says whether the read answered with a version.
func (r ReadOp) OK() bool { return r.Err == "" && (r.Status == 200 || r.Status == 304) }

// ReadyPoll is one GET /readyz.
type ReadyPoll struct {
	Instance   int
	Sent, Done time.Duration
	Status     int // 0: no answer
}

// StatusPoll is one etcd status request, from the test to one member.
type StatusPoll struct {
	Member     int
	Sent, Done time.Duration
	OK         bool
	Status     MemberStatus
}

// Recorder holds everything the traffic saw, for the checks and figures.
type Recorder struct {
	Clock    Clock
	mu       sync.Mutex
	writes   []*WriteOp
	attempts []Attempt
	reads    []ReadOp
	ready    []ReadyPoll
	statuses []StatusPoll
	// acks are (complete, version) of acknowledged writes, in order of
	// completion, for the newest version acknowledged before a time.
	acks []ackPoint
}

type ackPoint struct {
	at      time.Duration
	version int64
}

// NewRecorder starts recording on clock.
func NewRecorder(clock Clock) *Recorder { return &Recorder{Clock: clock} }

// NewWrite registers a write about to be sent.
func (r *Recorder) NewWrite(w WriteOp) *WriteOp {
	r.mu.Lock()
	defer r.mu.Unlock()
	w.ID = len(r.writes)
	w.Complete = Never
	op := &w
	r.writes = append(r.writes, op)
	return op
}

// AddAttempt records one try of a write.
func (r *Recorder) AddAttempt(a Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts = append(r.attempts, a)
}

// Ack marks a write acknowledged at version v.
func (r *Recorder) Ack(op *WriteOp, at time.Duration, v int64, replayed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Acked, op.Complete, op.Version, op.Replayed = true, at, v, replayed
	r.acks = append(r.acks, ackPoint{at, v})
}

// Refuse marks a write refused with an unexpected status: its outcome is
// unknown to the model, and the refusal is reported.
func (r *Recorder) Refuse(op *WriteOp, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Refused = why
}

// AddRead records a read.
func (r *Recorder) AddRead(x ReadOp) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = append(r.reads, x)
}

// AddReady records a /readyz poll.
func (r *Recorder) AddReady(p ReadyPoll) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ready = append(r.ready, p)
}

// AddStatus records an etcd status poll.
func (r *Recorder) AddStatus(p StatusPoll) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses = append(r.statuses, p)
}

// NewestAckBefore is the newest version acknowledged before t (0: none).
func (r *Recorder) NewestAckBefore(t time.Duration) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var v int64
	for _, a := range r.acks {
		if a.at < t && a.version > v {
			v = a.version
		}
	}
	return v
}

// ReadyFor is how long inst's /readyz has answered 200 to every poll, up
// to its latest answer (0 if the latest was not 200).
func (r *Recorder) ReadyFor(inst int) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var latest, since time.Duration = -1, -1
	for _, p := range r.ready {
		if p.Instance != inst {
			continue
		}
		if p.Done > latest {
			latest = p.Done
		}
		if p.Status != 200 && p.Done > since {
			since = p.Done
		}
	}
	if latest < 0 || since == latest {
		return 0
	}
	if since < 0 {
		return latest
	}
	return latest - since
}

// History is a copy of everything recorded, each list sorted by time.
type History struct {
	Writes   []WriteOp
	Attempts []Attempt
	Reads    []ReadOp
	Ready    []ReadyPoll
	Statuses []StatusPoll
}

// Snapshot copies what was recorded.
func (r *Recorder) Snapshot() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := History{
		Attempts: append([]Attempt(nil), r.attempts...),
		Reads:    append([]ReadOp(nil), r.reads...),
		Ready:    append([]ReadyPoll(nil), r.ready...),
		Statuses: append([]StatusPoll(nil), r.statuses...),
	}
	for _, w := range r.writes {
		h.Writes = append(h.Writes, *w)
	}
	sort.SliceStable(h.Attempts, func(i, j int) bool { return h.Attempts[i].Sent < h.Attempts[j].Sent })
	sort.SliceStable(h.Reads, func(i, j int) bool { return h.Reads[i].Invoke < h.Reads[j].Invoke })
	sort.SliceStable(h.Ready, func(i, j int) bool { return h.Ready[i].Done < h.Ready[j].Done })
	sort.SliceStable(h.Statuses, func(i, j int) bool { return h.Statuses[i].Done < h.Statuses[j].Done })
	return h
}
