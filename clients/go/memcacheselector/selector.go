// Package memcacheselector is a gomemcache (github.com/bradfitz/gomemcache)
// memcache.ServerSelector backed by a ringd.Client: every key goes to the
// memcached of the node ringd's placement names as its owner, in the
// version the client routes on.
//
//	c, err := ringd.NewClient(urls, "cache")
//	mc := memcache.NewFromSelector(memcacheselector.New(c))
//
// A node's address is where its memcached listens: host:port, or a path
// (containing "/") for a Unix socket, as memcache.ServerList reads them.
// The address is not resolved here: the dialer resolves it on each new
// connection, so no lookup ever blocks PickServer. A key whose owner has
// no usable address gets a *NodeAddressError (errors.Is ErrNoAddress)
// from PickServer, and so from the memcache call; no key is sent to a
// node ringd does not name.
//
// The package is a module of its own so that the core client module does
// not depend on gomemcache.
package memcacheselector

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/bradfitz/gomemcache/memcache"
	ringd "github.com/ringd/ringd/clients/go"
	"github.com/ringd/ringd/clients/go/placement"
)

// ErrNoAddress is matched (errors.Is) by a *NodeAddressError.
var ErrNoAddress = errors.New("memcacheselector: the owner has no usable address")

// NodeAddressError: the owner of a key has no address, or one that is
// neither host:port nor a socket path, so the key cannot be routed.
type NodeAddressError struct {
	// Version is the ring version.
	Version uint64
	// Node is the owner.
	Node string
	// Address is its address as the ring has it ("" for none).
	Address string
	// Err says what is wrong with Address (nil when there is none).
	Err error
}

func (e *NodeAddressError) Error() string {
	if e.Address == "" {
		return fmt.Sprintf("memcacheselector: version %d: node %s has no address", e.Version, e.Node)
	}
	return fmt.Sprintf("memcacheselector: version %d: node %s has address %q, not host:port or a socket path: %v",
		e.Version, e.Node, e.Address, e.Err)
}

// Is makes errors.Is(err, ErrNoAddress) hold.
func (e *NodeAddressError) Is(target error) bool { return target == ErrNoAddress }

// Unwrap is the parse error of the address, if any.
func (e *NodeAddressError) Unwrap() error { return e.Err }

// Selector is a memcache.ServerSelector that picks ringd's owner. Safe for
// concurrent use; PickServer takes no lock and, once per version, builds
// that version's address table.
type Selector struct {
	c   *ringd.Client
	cur atomic.Pointer[servers]
}

var _ memcache.ServerSelector = (*Selector)(nil)

// servers is one version's routable nodes. Immutable.
type servers struct {
	view  *ringd.View
	addrs map[string]net.Addr // active nodes with a usable address
	bad   map[string]*NodeAddressError
	list  []net.Addr // addrs, by node id
}

// New is a Selector that routes on the version c routes on. It does not
// own c: close c when the memcache client is no longer used.
func New(c *ringd.Client) *Selector { return &Selector{c: c} }

// current is the servers of the version the client routes on (nil
// before the first).
func (s *Selector) current() *servers {
	view := s.c.Current()
	if view == nil {
		return nil
	}
	srv := s.cur.Load()
	if srv == nil || srv.view != view {
		// Two goroutines may build the same table; either is right.
		srv = newServers(view)
		s.cur.Store(srv)
	}
	return srv
}

func newServers(view *ringd.View) *servers {
	srv := &servers{view: view, addrs: map[string]net.Addr{}, bad: map[string]*NodeAddressError{}}
	nodes := append([]placement.Node(nil), view.Snapshot.Nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	for _, n := range nodes {
		if n.State != placement.Active {
			continue
		}
		a, err := parseAddr(n.Address)
		if err != nil || n.Address == "" {
			srv.bad[n.ID] = &NodeAddressError{Version: view.Version(), Node: n.ID, Address: n.Address, Err: err}
			continue
		}
		srv.addrs[n.ID] = a
		srv.list = append(srv.list, a)
	}
	return srv
}

// parseAddr reads an address as memcache.ServerList does, without
// resolving it: a path when it contains "/", else host:port.
func parseAddr(s string) (net.Addr, error) {
	if s == "" {
		return nil, nil
	}
	if strings.Contains(s, "/") {
		return addr{network: "unix", str: s}, nil
	}
	if _, _, err := net.SplitHostPort(s); err != nil {
		return nil, err
	}
	return addr{network: "tcp", str: s}, nil
}

// addr is a net.Addr of a network and an address as dialled.
type addr struct{ network, str string }

func (a addr) Network() string { return a.network }
func (a addr) String() string  { return a.str }

// PickServer is the memcached of key's owner in the version the client
// routes on: memcache.ErrNoServers before the first version or when no
// node is active, a *NodeAddressError when the owner has no usable
// address.
func (s *Selector) PickServer(key string) (net.Addr, error) {
	srv := s.current()
	if srv == nil {
		return nil, memcache.ErrNoServers
	}
	owner, ok := srv.view.Placement.OwnerString(key)
	if !ok {
		return nil, memcache.ErrNoServers
	}
	if a, ok := srv.addrs[owner]; ok {
		return a, nil
	}
	if err, ok := srv.bad[owner]; ok {
		return nil, err
	}
	// The placement names only active nodes, which newServers sorted
	// into addrs or bad; this is a bug, reported rather than a panic.
	return nil, &NodeAddressError{Version: srv.view.Version(), Node: owner,
		Err: errors.New("not an active node of the snapshot")}
}

// Each calls f with the memcached of every active node that has a usable
// address (by node id), stopping at the first error, which it returns.
// memcache.Client uses it for FlushAll and Ping.
func (s *Selector) Each(f func(net.Addr) error) error {
	srv := s.current()
	if srv == nil {
		return nil
	}
	for _, a := range srv.list {
		if err := f(a); err != nil {
			return err
		}
	}
	return nil
}

// Version is the ring version PickServer answers from now (0 before the
// first); the client's WaitForVersion waits for one.
func (s *Selector) Version() uint64 {
	if view := s.c.Current(); view != nil {
		return view.Version()
	}
	return 0
}

// Unroutable are the active nodes of the current version whose keys
// PickServer refuses (no usable address), by node id.
func (s *Selector) Unroutable() []*NodeAddressError {
	srv := s.current()
	if srv == nil {
		return nil
	}
	out := make([]*NodeAddressError, 0, len(srv.bad))
	for _, e := range srv.bad {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}
