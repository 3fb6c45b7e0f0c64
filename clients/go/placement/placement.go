package placement

import "unsafe"

// Placement answers who owns every key of one ring version. It is
// immutable once built and safe for concurrent use. Build it with Build,
// from a snapshot (Snapshot.Placement), or from a canonical encoding
// (Decode); the last two verify the fingerprint first.
type Placement struct {
	algorithm         Algorithm
	hash              Hash
	zoneAware         bool
	replicationFactor int
	// nodes are the active nodes in id order; a node's index is its
	// position (2.3).
	nodes     []Node
	ramped    bool
	zoneOf    []int32 // zone number per node, nil without zone awareness
	zoneCount int
	keys      keyHasher
	lay       layout
	// fingerprint is SHA-256 of the encoding, computed once when built.
	fingerprint string
	version     uint64
}

// Stored is the state a ring keeps beside its config and nodes, which some
// algorithms need to place keys: it is not a function of the node set.
// Fields for other algorithms are ignored.
type Stored struct {
	// Buckets is jump's persisted bucket order (5.4.4); nil means the
	// initial order of a placement built from scratch, while an empty,
	// non-nil order is the order of a ring with no active node.
	Buckets []BucketRun
	// ServerIDs maps node ids to haproxy server ids (5.8.3); every active
	// node needs one. Nil numbers every node from 1 in id order
	// (InitialServerIDs), as a placement built from a node set alone.
	ServerIDs map[string]uint32
	// TableRows is table's stored table as rows of node ids, primary first.
	TableRows [][]string
	// TableBody is table's stored table as the body of its canonical
	// encoding (9.1), used when TableRows is nil.
	TableBody []byte
}

// Build places the active nodes of nodes (any states, any order) under
// config c, with the stored state some algorithms need (nil for none).
// It validates as spec 2.4 does and returns the first refusal; table
// needs its stored table, except with no active node (ErrTableRequired).
func Build(c Config, nodes []Node, stored *Stored) (*Placement, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if stored == nil {
		stored = &Stored{}
	}
	active, err := normalize(c, nodes)
	if err != nil {
		return nil, err
	}
	p := &Placement{
		algorithm:         c.Algorithm,
		hash:              c.Hash,
		zoneAware:         c.ZoneAware,
		replicationFactor: c.ReplicationFactor,
		nodes:             active,
		ramped:            isRamped(active),
		keys:              keyHasher{algorithm: c.Algorithm, hash: c.Hash, avalanche: c.Avalanche, tag: c.HashTag},
	}
	if p.lay, err = buildLayout(c, nodes, active, p.weights(), stored); err != nil {
		return nil, err
	}
	p.finish()
	return p, nil
}

// buildLayout materializes the algorithm's layout (spec 1, step 3).
func buildLayout(c Config, nodes, active []Node, weights []uint64, stored *Stored) (layout, error) {
	switch c.Algorithm {
	case Ring:
		return buildRing(active, c.Hash, c.VnodesPerWeight), nil
	case Ketama:
		return buildKetama(active), nil
	case Nginx:
		return buildNginx(active), nil
	case Twemproxy:
		names, err := serverNames(active)
		if err != nil {
			return nil, err
		}
		return buildTwemproxy(active, names, c.HashTag), nil
	case EnvoyRingHash:
		return buildEnvoyRingHash(active, c.MinimumRingSize, c.MaximumRingSize), nil
	case Maglev:
		return buildMaglev(active, weights, c.TableSize), nil
	case EnvoyMaglev:
		return buildEnvoyMaglev(active, c.TableSize), nil
	case Rendezvous:
		return buildRendezvous(active, c.Hash, weights), nil
	case Jump:
		runs := stored.Buckets
		if runs == nil {
			runs = initialJumpRuns(active)
		}
		return restoreJump(active, runs)
	case Haproxy:
		ids := stored.ServerIDs
		if ids == nil {
			ids = InitialServerIDs(nodes)
		}
		serverIDs, err := haproxyServerIDs(active, ids)
		if err != nil {
			return nil, err
		}
		return buildHaproxy(active, serverIDs, c.Avalanche), nil
	}
	// Table: a client never computes one (5.6.1).
	switch {
	case stored.TableRows != nil:
		return tableFromRows(active, c.Partitions, c.ReplicationFactor, stored.TableRows)
	case stored.TableBody != nil:
		return restoreTableBody(len(active), c.Partitions, c.ReplicationFactor, stored.TableBody)
	case len(active) == 0:
		// Every row is empty (r = 0), which follows from the config.
		return newTable(0, uint32(c.Partitions), 0, nil)
	}
	return nil, errorf(ErrTableRequired, "a table placement needs its stored table")
}

// weights are the weights maglev and rendezvous place by: weight × ramp
// in a ramped set, else the weights (2.2). envoy_maglev places by its EDS
// weights instead (5.11).
func (p *Placement) weights() []uint64 {
	w := make([]uint64, len(p.nodes))
	for i := range p.nodes {
		w[i] = uint64(p.nodes[i].Weight)
		if p.ramped {
			w[i] = p.nodes[i].scaledWeight()
		}
	}
	return w
}

// finish derives the zone numbers and the fingerprint.
func (p *Placement) finish() {
	if p.zoneAware {
		p.zoneOf, p.zoneCount = zoneNumbers(p.nodes)
	}
	p.fingerprint = fingerprintOf(p.Encode())
}

// Encode returns the canonical encoding (9.1), what thin clients download.
func (p *Placement) Encode() []byte {
	out := appendHeader(nil, p.algorithm, p.hash, p.zoneAware, p.replicationFactor, p.nodes, p.ramped)
	return p.lay.appendBody(out)
}

// Fingerprint is SHA-256 of the canonical encoding, 64 lowercase hex
// digits: two placements with one fingerprint place every key alike.
func (p *Placement) Fingerprint() string { return p.fingerprint }

// KeyHash is the key's hash in the algorithm's space (section 4): 64
// bits, or 32 for ketama and the proxy modes.
func (p *Placement) KeyHash(key []byte) uint64 { return p.keys.sum(key) }

// Owner returns the id of the node owning key, and false when no node is
// active (or, under ketama, none has a point). It does not allocate.
func (p *Placement) Owner(key []byte) (string, bool) {
	i, ok := p.lay.ownerIndex(p.keys.sum(key))
	if !ok {
		return "", false
	}
	return p.nodes[i].ID, true
}

// OwnerString is Owner for a key held as a string (its UTF-8 bytes). It
// does not copy the key: the hashes only read it.
func (p *Placement) OwnerString(key string) (string, bool) {
	return p.Owner(unsafe.Slice(unsafe.StringData(key), len(key)))
}

// PreferenceList returns up to r distinct node ids for key, owner first
// (section 6): min(r, active nodes) of them, fewer only when some node
// holds no point (ketama) or no slot (table). Zone-aware rings spread the
// first entries over distinct zones. r ≤ 0 gives none; ReplicationFactor
// is the usual r.
func (p *Placement) PreferenceList(key []byte, r int) []string {
	picked := selectReplicas(func(visit func(uint32) bool) { p.lay.walk(p.keys.sum(key), visit) },
		r, len(p.nodes), p.zoneOf, p.zoneCount)
	ids := make([]string, len(picked))
	for k, i := range picked {
		ids[k] = p.nodes[i].ID
	}
	return ids
}

// Algorithm is the placement's algorithm.
func (p *Placement) Algorithm() Algorithm { return p.algorithm }

// Hash is the placement's hash function.
func (p *Placement) Hash() Hash { return p.hash }

// ReplicationFactor is the default preference list length.
func (p *Placement) ReplicationFactor() int { return p.replicationFactor }

// ZoneAware reports whether preference lists spread over zones first.
func (p *Placement) ZoneAware() bool { return p.zoneAware }

// Version is the ring version the placement was built from, 0 when it
// was not built from a snapshot.
func (p *Placement) Version() uint64 { return p.version }

// Nodes returns the active nodes in id order; a node's position is its
// index in the encoding.
func (p *Placement) Nodes() []Node { return append([]Node(nil), p.nodes...) }
