package ringd

import (
	"crypto/tls"
	"net/http"
	"time"
)

// WatchMode says how a Client hears about new versions.
type WatchMode int

const (
	// WatchAuto streams (Server-Sent Events) and long-polls while the
	// stream is unusable, e.g. behind a proxy that buffers or refuses
	// event streams, trying the stream again every SSERetry.
	WatchAuto WatchMode = iota
	// WatchSSE streams only.
	WatchSSE
	// WatchLongPoll long-polls only.
	WatchLongPoll
)

// ClientKind is what kind of client acks, as GET …/clients shows it.
type ClientKind string

const (
	// KindLibrary is an application routing keys itself (the default).
	KindLibrary ClientKind = "library"
	// KindProxy is a proxy whose configuration an agent rewrites.
	KindProxy ClientKind = "proxy"
)

// settings is what the options set; NewClient and NewMember read the
// fields that concern them.
type settings struct {
	token          string
	clientID       string
	ack            bool
	ackInterval    time.Duration
	kind           ClientKind
	mode           WatchMode
	backoffMin     time.Duration
	backoffMax     time.Duration
	longPollWait   time.Duration
	idleTimeout    time.Duration
	sseRetry       time.Duration
	requestTimeout time.Duration
	timeoutSet     bool
	tls            *tls.Config
	tlsErr         error
	httpClient     *http.Client
	observer       func(Event)
	leaseTTL       time.Duration
}

func defaults() settings {
	return settings{
		ack:            true,
		ackInterval:    60 * time.Second,
		kind:           KindLibrary,
		mode:           WatchAuto,
		backoffMin:     100 * time.Millisecond,
		backoffMax:     10 * time.Second,
		longPollWait:   30 * time.Second,
		idleTimeout:    60 * time.Second,
		sseRetry:       5 * time.Minute,
		requestTimeout: 10 * time.Second,
		leaseTTL:       10 * time.Second,
	}
}

// Option configures a Client or a Member. Options that concern only one
// of them are ignored by the other.
type Option func(*settings)

// WithToken sends token as `Authorization: Bearer …`. A Client needs the
// read token (when the server has one); a Member the admin token, since
// registering changes the ring.
func WithToken(token string) Option { return func(s *settings) { s.token = token } }

// WithClientID is the id a Client acks under (default: host name and
// process id): 1-128 characters of A-Z a-z 0-9 . _ - :.
func WithClientID(id string) Option { return func(s *settings) { s.clientID = id } }

// WithAck turns acks on or off (default on).
func WithAck(on bool) Option { return func(s *settings) { s.ack = on } }

// WithAckInterval is how often the current version is acked again while
// nothing changes, so the ack outlives the server's --client-ttl (default
// 60 s; keep it below that TTL).
func WithAckInterval(d time.Duration) Option { return func(s *settings) { s.ackInterval = d } }

// WithKind says what kind of client acks (default KindLibrary).
func WithKind(k ClientKind) Option { return func(s *settings) { s.kind = k } }

// WithWatchMode picks the transport (default WatchAuto).
func WithWatchMode(m WatchMode) Option { return func(s *settings) { s.mode = m } }

// WithBackoff sets the wait after a failed attempt: it starts at min and
// doubles up to max, each wait drawn from the upper half of the step
// (defaults 100 ms and 10 s).
//
// A watch or long-poll answered 503 or 429 with a Retry-After in
// delta-seconds (a ringd at its --max-watchers answers 503 at-capacity
// with 1-10 s drawn at random) holds the next attempt back: it waits
// max(the backoff's next wait, min(Retry-After, max) + a jitter uniform
// in [0, 1 s)), and the backoff advances as after any failure. A 503 is
// first tried on every other server within the attempt, so only a
// refusal by the last one tried waits. A max below 10 s thus also cuts
// what a server at capacity can ask for.
func WithBackoff(min, max time.Duration) Option {
	return func(s *settings) { s.backoffMin, s.backoffMax = min, max }
}

// WithLongPollWait is how long each long-poll waits on the server
// (default 30 s; 1 ms to 5 min, the range the server accepts).
func WithLongPollWait(d time.Duration) Option { return func(s *settings) { s.longPollWait = d } }

// WithIdleTimeout drops and reopens a stream that delivers nothing, not
// even a keep-alive, for this long (default 60 s, above the server's 15 s
// keep-alive). It also bounds the wait for a stream's first event, after
// which WatchAuto takes the stream for unusable (a buffering proxy).
func WithIdleTimeout(d time.Duration) Option { return func(s *settings) { s.idleTimeout = d } }

// WithSSERetry is how long WatchAuto long-polls before trying the stream
// again (default 5 min).
func WithSSERetry(d time.Duration) Option { return func(s *settings) { s.sseRetry = d } }

// WithRequestTimeout is the time limit of plain requests: acks, version
// and table fetches, lease calls (default 10 s; for a Member, a third of
// the TTL, from 500 ms to 10 s).
func WithRequestTimeout(d time.Duration) Option {
	return func(s *settings) { s.requestTimeout, s.timeoutSet = d, true }
}

// WithHTTPClient sends every request through c (its Transport, and its
// TLS settings); its Timeout must be zero, since streams stay open. TLS
// options are ignored with it.
//
// Acks go through c too, with Request.Close set: an *http.Transport
// then closes each ack's connection once it is answered instead of
// keeping it idle beside the watch's until the server's 30 s timeout (a
// fleet would hold twice its size in server connections), and watches,
// long-polls and fetches keep c's pool. A RoundTripper of your
// own that ignores Request.Close keeps whatever it keeps. Without this
// option each Client (and Member) makes its own transport, a clone of
// http.DefaultTransport, and sends acks through a clone of that with
// keep-alives off; there is no need to share one http.Client between
// Clients.
func WithHTTPClient(c *http.Client) Option { return func(s *settings) { s.httpClient = c } }

// WithObserver calls f with every Event (a version applied or refused, a
// connection made or lost, an ack), so an application can export
// metrics or logs without the client depending on a metrics library. f
// is called from the client's goroutines and must not block.
func WithObserver(f func(Event)) Option { return func(s *settings) { s.observer = f } }

// WithLeaseTTL is how long a Member's lease lasts without a renewal
// (default 10 s; 1 s to 1 h). The member renews about every third of it.
func WithLeaseTTL(d time.Duration) Option { return func(s *settings) { s.leaseTTL = d } }
