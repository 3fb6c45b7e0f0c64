package partition

import "time"

// The targets the test asserts. They restate ringd's promise under store
// outages (docs/api.md, "Store outages": an answer without `Ringd-Stale:
// true` is current, /readyz says whether the instance may be trusted, and
// changes fail with 503 and Retry-After while it may not) as the numbers
// set for partitions:
const (
	// ConvergeAfterLeader bounds the time from etcd being reachable again
	// from an instance with a leader to that instance answering /readyz
	// with 200 and serving the newest acknowledged version unmarked. The
	// target is 2 s at p99 over runs; one run has 16 samples (8 heals, 2
	// instances), so each must meet it.
	ConvergeAfterLeader = 2 * time.Second
	// WriteAnswerWorst bounds every write attempt, from sending it to its
	// answer (acknowledged, or 503 with Retry-After), also while the
	// instance does not know yet that it is cut off: "503 within 3 s at
	// worst".
	WriteAnswerWorst = 3 * time.Second
	// WriteAnswerKnown bounds a write attempt sent after the instance's
	// /readyz already answered 503: "503 with Retry-After within 1 s once
	// the instance knows". Such a write that waits for the heal and then
	// succeeds breaks it too.
	WriteAnswerKnown = 1 * time.Second
)

// The scenario: how long each fault is held and how the run is paced.
// These shape the run, they are not targets.
const (
	// Hold is how long a fault lasts: longer than etcd's election timeout
	// (1 s), ringd's staleness bound (0.5 s) and its write bound (6 s is
	// the whole-commit bound; 3 s is the target), so each plays out.
	Hold = 5 * time.Second
	// FlapHalfPeriod is how long a flapping link stays down, then up.
	FlapHalfPeriod = 300 * time.Millisecond
	// ConvergeLimit is how long an instance may take to converge after a
	// heal before the run gives up on it (a liveness bound, far above the
	// target; an instance that needs it fails ConvergeAfterLeader anyway).
	ConvergeLimit = 20 * time.Second
	// Settle is normal traffic after both instances converged, before the
	// next fault: any 503 in it is a 503 outside a fault.
	Settle = 2 * time.Second
	// Warmup is normal traffic before the first fault.
	Warmup = 3 * time.Second
	// SteadyLimit bounds the wait, before each fault, for etcd to agree
	// on a leader and both instances to have been ready for SteadyFor.
	SteadyLimit = 20 * time.Second
	SteadyFor   = time.Second
	// WriteGiveUp is how long a writer retries one change before it
	// records its outcome as unknown and moves on (a real client's
	// deadline).
	WriteGiveUp = 30 * time.Second
	// DrainLimit bounds how long writers keep retrying their last change
	// after traffic stops, so every key gets an answer.
	DrainLimit = 20 * time.Second
	// CheckLimit bounds Porcupine's search; a history it cannot decide
	// within it fails the run.
	CheckLimit = 120 * time.Second
)

// Traffic shape: writers and readers per instance, and their pauses.
const (
	WritersPerInstance = 2
	ReadersPerInstance = 2
	WritePause         = 20 * time.Millisecond
	ReadPause          = 15 * time.Millisecond
	// ReadyPollEvery and StatusPollEvery set the resolution of /readyz and
	// of etcd's leader as the test sees them.
	ReadyPollEvery  = 50 * time.Millisecond
	StatusPollEvery = 50 * time.Millisecond
	// ProbeEvery paces the convergence probe after a heal.
	ProbeEvery = 20 * time.Millisecond
	// WriteTimeout is the client's timeout for one write attempt: above
	// ringd's own 6 s bound on a commit, so the client sees ringd's answer.
	WriteTimeout = 10 * time.Second
	// ReadTimeout is the client's timeout for one read (a long-poll waits
	// LongPollWait plus up to 1/16 of it).
	ReadTimeout  = 5 * time.Second
	LongPollWait = "2s"
	// NodeSlots is how many nodes each writer cycles through, so the ring
	// stays small while every write changes it.
	NodeSlots = 4
)
