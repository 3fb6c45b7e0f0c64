package goredisring

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
	ringd "github.com/ringd/ringd/clients/go"
	"github.com/ringd/ringd/clients/go/placement"
)

// ErrNoAddress is matched (errors.Is) by a *NodeAddressError.
var ErrNoAddress = errors.New("goredisring: an active node has no address")

// ErrInvalidOptions: New was given RingOptions it must set itself.
var ErrInvalidOptions = errors.New("goredisring: invalid ring options")

// NodeAddressError says which active nodes of a version have no address,
// so that no Redis can be their shard: their keys go to the next node of
// ringd's preference list that is a shard.
type NodeAddressError struct {
	// Version is the ring version.
	Version uint64
	// Nodes are the active nodes without an address, sorted.
	Nodes []string
}

func (e *NodeAddressError) Error() string {
	return fmt.Sprintf("goredisring: version %d: active nodes without an address cannot be routed to: %s",
		e.Version, strings.Join(e.Nodes, ", "))
}

// Is makes errors.Is(err, ErrNoAddress) hold.
func (e *NodeAddressError) Is(target error) bool { return target == ErrNoAddress }

// Status is what the adapter has installed in the Ring.
type Status struct {
	// Version is the ring version the Ring routes on; 0 for none.
	Version uint64
	// Shards is the shard name (node id) → address map handed to
	// SetAddrs for Version. Do not modify it.
	Shards map[string]string
	// Applied counts versions installed.
	Applied uint64
	// LastError is the last problem met (a *NodeAddressError); nil
	// until one. Not cleared by a later version.
	LastError error
}

// Option configures a Sharding.
type Option func(*Sharding)

// WithErrorHandler calls f with each problem met when a version is
// installed (a *NodeAddressError), e.g. to log it. f is called from the
// adapter's goroutine (or New's) and must not block.
func WithErrorHandler(f func(error)) Option { return func(s *Sharding) { s.onError = f } }

// Sharding is a redis.Ring whose shards and key hash follow a ringd ring.
// Safe for concurrent use.
type Sharding struct {
	c       *ringd.Client
	ring    *redis.Ring
	onError func(error)

	// install is the version being handed to SetAddrs (pending, nil
	// between installs) and the one last installed; one pointer, so
	// NewConsistentHash never reads the two from different installs.
	install atomic.Pointer[installing]

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu      sync.Mutex
	status  Status
	changed chan struct{}
}

type installing struct{ pending, installed *shardSet }

// shardSet is one ring version as go-redis sees it.
type shardSet struct {
	view  *ringd.View
	addrs map[string]string // node id → address, active nodes with one
}

// New builds a redis.Ring from opt with the shards and hash of the
// version c routes on, and follows c: each version c applies is installed
// with SetAddrs. Before c's first version the Ring has no shards (its
// commands fail with "all ring shards are down"); wait with
// WaitForVersion. opt is copied; its Addrs and NewConsistentHash must be
// unset (ErrInvalidOptions), since the adapter sets them. Close stops
// following and closes the Ring, not c.
func New(c *ringd.Client, opt *redis.RingOptions, opts ...Option) (*Sharding, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: no ringd client", ErrInvalidOptions)
	}
	var o redis.RingOptions
	if opt != nil {
		if len(opt.Addrs) > 0 || opt.NewConsistentHash != nil {
			return nil, fmt.Errorf("%w: Addrs and NewConsistentHash are set by the adapter, from the ring", ErrInvalidOptions)
		}
		o = *opt
	}
	s := &Sharding{c: c, done: make(chan struct{}), changed: make(chan struct{})}
	for _, f := range opts {
		f(s)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	first := s.prepare(c.Current())
	s.install.Store(&installing{pending: first})
	o.Addrs = first.addrs
	o.NewConsistentHash = s.newHash
	s.ring = redis.NewRing(&o) // calls SetAddrs(o.Addrs), so newHash, with first
	s.installed(first)
	go s.follow(first.view)
	return s, nil
}

// Ring is the redis.Ring to send commands through.
func (s *Sharding) Ring() *redis.Ring { return s.ring }

// follow installs each version c applies after held, until Close or
// until c is closed (the Ring then keeps its last version).
func (s *Sharding) follow(held *ringd.View) {
	defer close(s.done)
	for {
		_, err := s.c.WaitFor(s.ctx, func(ringd.Status) bool {
			v := s.c.Current()
			return v != nil && v != held
		})
		if err != nil {
			return
		}
		held = s.c.Current()
		set := s.prepare(held)
		prev := s.install.Load().installed
		s.install.Store(&installing{pending: set, installed: prev})
		s.ring.SetAddrs(set.addrs)
		s.installed(set)
	}
}

// prepare is the shard set of view (none for nil), reporting active
// nodes without an address.
func (s *Sharding) prepare(view *ringd.View) *shardSet {
	set := &shardSet{view: view, addrs: map[string]string{}}
	if view == nil {
		return set
	}
	var missing []string
	for _, n := range view.Snapshot.Nodes {
		switch {
		case n.State != placement.Active:
		case n.Address == "":
			missing = append(missing, n.ID)
		default:
			set.addrs[n.ID] = n.Address
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		err := &NodeAddressError{Version: view.Version(), Nodes: missing}
		s.update(func(st *Status) { st.LastError = err })
		if s.onError != nil {
			s.onError(err)
		}
	}
	return set
}

// installed records that SetAddrs returned with set: from now on every
// hash go-redis builds is set's.
func (s *Sharding) installed(set *shardSet) {
	s.install.Store(&installing{installed: set})
	var version uint64
	if set.view != nil {
		version = set.view.Version()
	}
	s.update(func(st *Status) {
		st.Version, st.Shards = version, set.addrs
		if set.view != nil {
			st.Applied++
		}
	})
}

// newHash is RingOptions.NewConsistentHash: go-redis calls it with the
// names of the shards it holds and finds up, under its lock, from
// SetAddrs or from its heartbeat. The version is the pending one when it
// has every one of those names (SetAddrs installing it, or a heartbeat
// over shards both versions have), else the installed one.
func (s *Sharding) newHash(shards []string) redis.ConsistentHash {
	in := s.install.Load()
	set := in.installed
	if in.pending != nil && (set == nil || in.pending.hasAll(shards)) {
		set = in.pending
	}
	h := &hash{live: make(map[string]struct{}, len(shards))}
	for _, name := range shards {
		h.live[name] = struct{}{}
	}
	if set != nil && set.view != nil {
		h.p, h.n = set.view.Placement, len(set.view.Placement.Nodes())
	}
	return h
}

func (set *shardSet) hasAll(names []string) bool {
	for _, n := range names {
		if _, ok := set.addrs[n]; !ok {
			return false
		}
	}
	return true
}

// hash is one version's placement over the shards go-redis holds and
// finds up. Immutable.
type hash struct {
	p    *placement.Placement // nil: no version yet
	n    int                  // p's active nodes
	live map[string]struct{}
}

// Get is the shard of key (its hash tag, go-redis having cut it): ringd's
// owner, else the first live shard of the key's preference list (for a
// table ring, its replication_factor nodes), else "".
// It allocates only when the owner is not a live shard.
func (h *hash) Get(key string) string {
	if h.p == nil {
		return ""
	}
	owner, ok := h.p.OwnerString(key)
	if !ok {
		return ""
	}
	if _, up := h.live[owner]; up {
		return owner
	}
	for _, n := range h.p.PreferenceList([]byte(key), h.n) {
		if _, up := h.live[n]; up {
			return n
		}
	}
	return ""
}

// Status is what the Ring routes on now.
func (s *Sharding) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

func (s *Sharding) update(f func(*Status)) {
	s.mu.Lock()
	f(&s.status)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// WaitForVersion waits until the Ring routes on version v or a newer
// one, and returns the status then; or until ctx is done or the adapter
// closed (an error wrapping ctx.Err() or ringd.ErrClosed).
func (s *Sharding) WaitForVersion(ctx context.Context, v uint64) (Status, error) {
	for {
		s.mu.Lock()
		st, ch := s.status, s.changed
		s.mu.Unlock()
		if st.Version >= v {
			return st, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return st, fmt.Errorf("goredisring: waiting for version %d (at %d): %w", v, st.Version, ctx.Err())
		case <-s.done:
			return st, fmt.Errorf("goredisring: waiting for version %d (at %d): %w", v, st.Version, ringd.ErrClosed)
		}
	}
}

// Close stops following the ring and closes the Ring (its connections).
// The ringd client is the caller's to close. Safe to call twice.
func (s *Sharding) Close() error {
	var err error
	s.once.Do(func() {
		s.cancel()
		<-s.done
		err = s.ring.Close()
	})
	return err
}
