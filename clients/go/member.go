package ringd

import (
	"context"
	"sync"
	"time"
)

// NodeRecord is the node a Member registers: its id and what PUT
// …/nodes/{node}/lease takes. Zero fields are left to the server's
// defaults (weight 1, no zone, state per the ring's policy).
type NodeRecord struct {
	// ID names the node: 1-128 characters of A-Z a-z 0-9 . _ - :.
	ID string
	// Address is where clients reach the node, e.g. 10.0.0.7:11211.
	Address string
	// Weight is its relative capacity, 1 to 1,000,000; 0 means 1.
	Weight int
	// Zone is its failure domain, "" for none.
	Zone string
	// HashKey is hashed instead of the id when set.
	HashKey string
	// State is active, draining or joining; "" leaves it to the ring.
	State string
	// Labels are free-form metadata.
	Labels map[string]string
}

// MemberState is where a Member stands with its lease.
type MemberState int

const (
	// MemberJoining: not registered yet (the first registration is under
	// way, or waits to be tried again).
	MemberJoining MemberState = iota
	// MemberRegistered: holds a fresh lease (first, or after a loss).
	MemberRegistered
	// MemberRenewing: holds a lease it has renewed since registering.
	MemberRenewing
	// MemberLost: the lease is gone (ringd refused a renewal, or no
	// server answered before its deadline); it is registering again.
	MemberLost
	// MemberLeft: released on Leave or context cancellation; final.
	MemberLeft
	// MemberFailed: stopped on a refusal retrying cannot fix (a wrong
	// token, a missing ring, a record ringd refuses); final, see
	// MemberStatus.LastError.
	MemberFailed
)

// String is the state's name: joining, registered, renewing, lost, left,
// failed.
func (s MemberState) String() string {
	return [...]string{"joining", "registered", "renewing", "lost", "left", "failed"}[s]
}

// HoldsLease says whether the member holds a lease it believes live.
func (s MemberState) HoldsLease() bool { return s == MemberRegistered || s == MemberRenewing }

// Final says whether nothing will change any more (left or failed).
func (s MemberState) Final() bool { return s == MemberLeft || s == MemberFailed }

// MemberStatus is what a Member reports.
type MemberStatus struct {
	// State is where it stands.
	State MemberState
	// LeaseID is the lease held, or last held (kept when lost or left).
	LeaseID string
	// Deadline is the lease's deadline as ringd last answered it.
	Deadline time.Time
	// Version is the ring's version after the last registration.
	Version uint64
	// Server is the server that answered last.
	Server string
	// Heartbeats counts successful registrations and renewals.
	Heartbeats uint64
	// Losses counts lost leases. A loss is followed at once by a new
	// registration, so a reader may see Registered again without having
	// seen Lost: this count says it happened.
	Losses uint64
	// LastError is the most recent failure, cleared by the next success;
	// in MemberFailed, the refusal that stopped it.
	LastError error
}

// Member keeps a node in a ring with a lease, as `ringd node join` does:
// a goroutine registers the node (PUT …/nodes/{node}/lease), renews
// about every third of the TTL with jitter (so members started together
// spread out), fails over between the servers, registers again at once
// when the lease was lost, and releases it on Leave or when the context
// given to NewMember is done, so ringd marks the node left at once
// rather than after the TTL.
type Member struct {
	ring string
	node string
	stop chan struct{}
	once sync.Once
	done chan struct{}
	err  error // the release's outcome, set before done closes

	mu      sync.Mutex
	status  MemberStatus
	changed chan struct{}
}

// NewMember starts keeping node in ring on the servers urls. It returns
// at once; WaitFor waits for the registration. The options that apply
// are WithToken (the admin token), WithLeaseTTL (default 10 s, 1 s to
// 1 h), WithBackoff, WithRequestTimeout (default a third of the TTL,
// 500 ms to 10 s, so one hung server cannot use up a lease), the TLS
// options and WithHTTPClient.
func NewMember(ctx context.Context, urls []string, ring string, node NodeRecord, opts ...Option) (*Member, error) {
	s := defaults()
	for _, o := range opts {
		o(&s)
	}
	if !ringName.MatchString(ring) {
		return nil, invalidOption("ring name %q: 1-63 characters of a-z 0-9 . _ -, starting with a letter or digit", ring)
	}
	if !idName.MatchString(node.ID) {
		return nil, invalidOption("node id %q: 1-128 characters of A-Z a-z 0-9 . _ - :, starting with a letter or digit", node.ID)
	}
	if s.leaseTTL < time.Second || s.leaseTTL > time.Hour || s.leaseTTL%time.Millisecond != 0 {
		return nil, invalidOption("the lease TTL %v is out of range: use 1s to 1h", s.leaseTTL)
	}
	if s.backoffMin <= 0 || s.backoffMax < s.backoffMin {
		return nil, invalidOption("the backoff must be more than zero, its maximum at least its minimum")
	}
	if !s.timeoutSet {
		s.requestTimeout = min(max(s.leaseTTL/3, 500*time.Millisecond), 10*time.Second)
	}
	eps, err := newEndpoints(urls, &s)
	if err != nil {
		return nil, err
	}
	m := &Member{
		ring: ring, node: node.ID,
		stop: make(chan struct{}), done: make(chan struct{}), changed: make(chan struct{}),
	}
	t := &memberTask{
		m: m, eps: eps, ttl: s.leaseTTL,
		path:    "/v1/rings/" + ring + "/nodes/" + node.ID + "/lease",
		body:    leaseBody(node, s.leaseTTL),
		backoff: newBackoff(s.backoffMin, s.backoffMax),
	}
	go func() {
		defer close(m.done)
		m.err = t.run(ctx)
	}()
	return m, nil
}

// Ring is the ring joined.
func (m *Member) Ring() string { return m.ring }

// Node is the node kept in it.
func (m *Member) Node() string { return m.node }

// Status is the status now.
func (m *Member) Status() MemberStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status
}

func (m *Member) update(f func(*MemberStatus)) {
	m.mu.Lock()
	f(&m.status)
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
}

// WaitFor waits until done holds for the status and returns it; or until
// ctx is done, or the member stopped (left or failed) without done
// holding: then the error wraps ctx.Err() or ErrClosed and the last error.
func (m *Member) WaitFor(ctx context.Context, done func(MemberStatus) bool) (MemberStatus, error) {
	for {
		m.mu.Lock()
		st, ch := m.status, m.changed
		m.mu.Unlock()
		if done(st) {
			return st, nil
		}
		if st.State.Final() {
			return st, waitError(ErrClosed, st.LastError)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return st, waitError(ctx.Err(), st.LastError)
		}
	}
}

// Done is closed when the member has stopped: left (after Leave or the
// context's end, once the release was sent) or failed.
func (m *Member) Done() <-chan struct{} { return m.done }

// Leave stops renewing and releases the lease, so ringd marks the node
// left at once. It waits for a request in flight first, so a
// registration it raced with is released too, and returns the release's
// failure if ringd could not be told (the lease then expires by its
// TTL), or ctx.Err() if ctx ends first (the release still goes on).
func (m *Member) Leave(ctx context.Context) error {
	m.once.Do(func() { close(m.stop) })
	select {
	case <-m.done:
		return m.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
