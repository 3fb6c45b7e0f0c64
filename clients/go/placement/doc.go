// Package placement is ringd's placement core in Go: it turns a ring
// config and a node set (plus the state some algorithms keep) into a
// placement that answers, bit for bit as the Rust server does, who owns a
// key, its preference list, each node's ownership, and the canonical
// encoding and fingerprint. docs/placement-spec.md in the ringd
// repository is the normative definition; section numbers in comments
// refer to it.
//
// All eleven algorithms are implemented: ring, ketama, maglev, jump,
// rendezvous, table, the proxy modes nginx, haproxy and twemproxy, and
// the xDS modes envoy_ring_hash (Envoy's and gRPC's ring_hash) and
// envoy_maglev (Envoy's MAGLEV), with every hash each accepts.
//
// A client builds the placement of a ring version from its snapshot, which
// it verifies against the snapshot's fingerprint:
//
//	s, err := placement.ParseSnapshot(body) // GET /v1/rings/{ring}/snapshot
//	if err != nil { … }
//	p, err := s.Placement(placement.TableSource{}) // FingerprintMismatch if it disagrees
//	if err != nil { … }
//	owner, ok := p.OwnerString("user:42")
//	replicas := p.PreferenceList([]byte("user:42"), p.ReplicationFactor())
//
// A table snapshot carries no table: pass the downloaded encoding of
// GET …/snapshots/{v}/table, or the previous version's placement to apply
// the snapshot's moves to, in the TableSource. Decode builds a placement
// from such an encoding alone (thin mode), for any algorithm; Build from a
// config and nodes directly.
//
// Refusals are *Error values whose Kind matches errors.Is with the ErrX
// sentinels; their names are those of the Rust PlacementError variants.
package placement
