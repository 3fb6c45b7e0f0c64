// Package placement is ringd's placement core in Go: it turns a ring
// config and a node set (plus the state some algorithms keep) into a
// placement that answers, bit for bit as the Rust server does, who owns a
// key, its preference list, each node's ownership, and the canonical
// encoding and fingerprint. docs/placement-spec.md in the ringd
// repository is the normative definition; section numbers in comments
// refer to it.
//
// All nine algorithms are implemented: ring, ketama, maglev, jump,
// rendezvous, table, and the proxy modes nginx, haproxy and twemproxy,
// with every hash each accepts.
//
//	c := placement.DefaultConfig(placement.Ring)
//	p, err := placement.Build(c, []placement.Node{placement.NewNode("a"), placement.NewNode("b")}, nil)
//	if err != nil { … }
//	owner, ok := p.OwnerString("user:42")
//
// Refusals are *Error values whose Kind matches errors.Is with the ErrX
// sentinels; their names are those of the Rust PlacementError variants.
package placement
