package ringd

import "time"

// Transport is how a Client currently hears about new versions.
type Transport int

const (
	// Connecting: not connected (starting, or between attempts).
	Connecting Transport = iota
	// SSE: a Server-Sent Events stream.
	SSE
	// LongPoll: repeated long-polls.
	LongPoll
)

// String is the transport's name: connecting, sse or long-poll.
func (t Transport) String() string {
	switch t {
	case SSE:
		return "sse"
	case LongPoll:
		return "long-poll"
	}
	return "connecting"
}

// Status is what a Client's watch is doing, for health checks, metrics
// and tests. Counters only grow.
type Status struct {
	// Version is the version routed on; 0 before the first.
	Version uint64
	// Fingerprint is that version's verified fingerprint.
	Fingerprint string
	// Acked is the newest version whose ack the server accepted while it
	// was still the one routed on; 0 for none.
	Acked uint64
	// Deleted: the server said the ring was deleted, and no new ring of
	// that name has appeared. The client keeps routing on Version.
	Deleted bool
	// Transport is how new versions arrive now.
	Transport Transport
	// Server is the server the watch is connected to, "" for none.
	Server string
	// LastError is the most recent failure (connection, refusal,
	// verification); nil until the first. It is not cleared by success.
	LastError error
	// LastErrorAt is when LastError happened.
	LastErrorAt time.Time
	// Applied counts versions verified and swapped in.
	Applied uint64
	// Refused counts versions refused (verification failed or the
	// placement core or the decoder refused them).
	Refused uint64
	// Reconnects counts watch attempts that ended in failure and were
	// made again, on the same server or another.
	Reconnects uint64
	// TableDownloads counts table versions built by downloading the table.
	TableDownloads uint64
	// TableMovesApplied counts table versions built from the previous
	// version and the version's moves.
	TableMovesApplied uint64
	// Acks counts acks the server accepted; AckFailures those it did not.
	Acks, AckFailures uint64
}

// EventKind says what an Event reports.
type EventKind int

const (
	// EventApplied: a version was verified and swapped in (Version, From).
	EventApplied EventKind = iota + 1
	// EventRefused: a version was refused (Version, Err).
	EventRefused
	// EventConnected: the watch connected (Server, Transport).
	EventConnected
	// EventDisconnected: a watch attempt ended in failure (Server, Err).
	EventDisconnected
	// EventAcked: an ack was sent (Version; Err when it failed).
	EventAcked
	// EventDeleted: the server says the ring was deleted.
	EventDeleted
)

// Event is what WithObserver's function receives.
type Event struct {
	// Kind says what happened; the other fields are set as it says.
	Kind EventKind
	// Version is the version concerned.
	Version uint64
	// From is the version held before an EventApplied, 0 for none.
	From uint64
	// Reset: an EventApplied replaces the client's history (the ring was
	// recreated, or the client fell behind the retained history).
	Reset bool
	// Server is the server concerned.
	Server string
	// Transport is the transport of an EventConnected.
	Transport Transport
	// Err is the failure, if any.
	Err error
	// Took is how long verifying (and completing a table) took, for an
	// EventApplied.
	Took time.Duration
}
