package ringd

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringd/ringd/clients/go/placement"
)

// View is one verified ring version: the snapshot as the server sent it
// and the placement this process rebuilt from it, whose fingerprint
// matched. Immutable and safe for concurrent use.
type View struct {
	// Snapshot is the version as received.
	Snapshot *placement.Snapshot
	// Placement answers lookups.
	Placement *placement.Placement
}

// Version is the ring version.
func (v *View) Version() uint64 { return v.Snapshot.Version }

// Fingerprint is the verified fingerprint.
func (v *View) Fingerprint() string { return v.Snapshot.Fingerprint }

// views is what one swap installs: the current view and the one it
// replaced, as one pointer, so Handoff never pairs views of two swaps.
type views struct {
	current, previous *View
}

// Client follows one ring and answers lookups from a verified copy of its
// placement in memory, with no network call and no lock on the lookup
// path. A background goroutine watches the ring (a Server-Sent Events
// stream, or long-polls), verifies each version against its fingerprint,
// swaps it in atomically and acks it. Safe for concurrent use.
type Client struct {
	ring     string
	clientID string
	s        settings
	eps      *endpoints

	cur     atomic.Pointer[views]
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	acks    chan struct{} // a new version to ack (capacity 1: the newest wins)
	closing sync.Once

	mu      sync.Mutex
	status  Status
	changed chan struct{} // closed and replaced on every status change
}

var (
	ringName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)
	idName   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)
)

// NewClient starts following ring on the servers urls (equivalent ringd
// instances; each entry may itself be a comma-separated list, as
// RINGD_ADDR is). It returns at once: Ready waits for the first version.
// Close stops it.
func NewClient(urls []string, ring string, opts ...Option) (*Client, error) {
	s := defaults()
	for _, o := range opts {
		o(&s)
	}
	if !ringName.MatchString(ring) {
		return nil, invalidOption("ring name %q: 1-63 characters of a-z 0-9 . _ -, starting with a letter or digit", ring)
	}
	if s.clientID == "" {
		s.clientID = defaultClientID()
	}
	if !idName.MatchString(s.clientID) {
		return nil, invalidOption("client id %q: 1-128 characters of A-Z a-z 0-9 . _ - :, starting with a letter or digit", s.clientID)
	}
	switch {
	case s.backoffMin <= 0 || s.backoffMax < s.backoffMin:
		return nil, invalidOption("the backoff must be more than zero, its maximum at least its minimum")
	case s.idleTimeout <= 0, s.ackInterval <= 0, s.sseRetry <= 0:
		return nil, invalidOption("the idle timeout, ack interval and SSE retry must be more than zero")
	case s.longPollWait < time.Millisecond || s.longPollWait > 5*time.Minute:
		return nil, invalidOption("the long-poll wait must be 1ms to 5m, the range the server accepts")
	case s.kind != KindLibrary && s.kind != KindProxy:
		return nil, invalidOption("client kind %q: use library or proxy", s.kind)
	}
	eps, err := newEndpoints(urls, &s)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{
		ring: ring, clientID: s.clientID, s: s, eps: eps,
		ctx: ctx, cancel: cancel,
		acks: make(chan struct{}, 1), changed: make(chan struct{}),
	}
	w := &watcher{c: c, backoff: newBackoff(s.backoffMin, s.backoffMax)}
	c.wg.Add(1)
	go func() { defer c.wg.Done(); w.run(ctx) }()
	if s.ack {
		c.wg.Add(1)
		go func() { defer c.wg.Done(); c.ackLoop(ctx) }()
	}
	return c, nil
}

// defaultClientID is <host>-<pid>, cut to the client-id rules.
func defaultClientID() string {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return r
		}
		return '-'
	}, host)
	host = strings.TrimLeft(host, "._-")
	if len(host) > 100 {
		host = host[:100]
	}
	if host == "" {
		host = "client"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// Ring is the ring followed.
func (c *Client) Ring() string { return c.ring }

// ClientID is the id acks are sent under.
func (c *Client) ClientID() string { return c.clientID }

// Current is the view routed on; nil before the first version.
func (c *Client) Current() *View {
	if v := c.cur.Load(); v != nil {
		return v.current
	}
	return nil
}

// Owner is the node that owns key (any bytes), and false before the
// first version or when no node is active. One atomic load and the
// placement's lookup: it never blocks.
func (c *Client) Owner(key []byte) (string, bool) {
	v := c.cur.Load()
	if v == nil {
		return "", false
	}
	return v.current.Placement.Owner(key)
}

// OwnerString is Owner for a string key, without copying it.
func (c *Client) OwnerString(key string) (string, bool) {
	v := c.cur.Load()
	if v == nil {
		return "", false
	}
	return v.current.Placement.OwnerString(key)
}

// PreferenceList is the first r distinct nodes for key, owner first
// (fewer when fewer nodes are active; none before the first version).
func (c *Client) PreferenceList(key []byte, r int) []string {
	v := c.cur.Load()
	if v == nil {
		return nil
	}
	return v.current.Placement.PreferenceList(key, r)
}

// Status is what the watch is doing now.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// update changes the status under the lock and wakes WaitFor callers.
func (c *Client) update(f func(*Status)) {
	c.mu.Lock()
	f(&c.status)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

func (c *Client) notify(e Event) {
	if c.s.observer != nil {
		c.s.observer(e)
	}
}

// WaitFor waits until done holds for the status, and returns that
// status; or until ctx is done or the client closed, and returns the
// status with an error that wraps ctx.Err() (or ErrClosed) and the
// status's LastError.
func (c *Client) WaitFor(ctx context.Context, done func(Status) bool) (Status, error) {
	for {
		c.mu.Lock()
		st, ch := c.status, c.changed
		c.mu.Unlock()
		if done(st) {
			return st, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return st, waitError(ctx.Err(), st.LastError)
		case <-c.ctx.Done():
			return st, waitError(ErrClosed, st.LastError)
		}
	}
}

func waitError(why, last error) error {
	if last == nil {
		return why
	}
	return fmt.Errorf("%w (last error: %w)", why, last)
}

// Ready waits for the first verified version, until ctx is done. On
// failure its error wraps ctx.Err() and the last error met (a wrong token
// matches ErrUnauthorized), so a caller sees why.
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.WaitFor(ctx, func(s Status) bool { return s.Version > 0 })
	return err
}

// WaitForVersion waits until the client routes on version v or a newer
// one.
func (c *Client) WaitForVersion(ctx context.Context, v uint64) (Status, error) {
	return c.WaitFor(ctx, func(s Status) bool { return s.Version >= v })
}

// Close stops watching and acking and waits for the goroutines to end.
// Lookups keep answering from the last version. Safe to call twice.
func (c *Client) Close() error {
	c.closing.Do(func() {
		c.cancel()
		c.wg.Wait()
	})
	return nil
}

// swap installs view as the current one and returns the one it replaced.
func (c *Client) swap(view *View) *View {
	old := c.cur.Load()
	var prev *View
	if old != nil {
		prev = old.current
	}
	c.cur.Store(&views{current: view, previous: prev})
	return prev
}
