package placement

import (
	"encoding/base64"
	"encoding/json"
	"math"
)

// Snapshot is one ring version as `GET /v1/rings/{ring}/snapshot`,
// `…/snapshots/{v}` and the watch events carry it (docs/api.md), read for
// placement: fields that place nothing (created_at, change, a config's
// membership, a node's labels) are not kept.
type Snapshot struct {
	// Ring is the ring's name.
	Ring string
	// Version is the version's number, 1 at creation.
	Version uint64
	// Config is the ring config.
	Config Config
	// Nodes are every node, in any state.
	Nodes []Node
	// Fingerprint is the SHA-256 of the placement's canonical encoding;
	// a placement rebuilt from the snapshot must match it.
	Fingerprint string
	// Buckets is jump's persisted bucket order; nil when absent.
	Buckets []BucketRun
	// ServerIDs maps every node to its haproxy server id; nil when absent.
	ServerIDs map[string]uint32
	// NextServerID is above every id the ring has given (haproxy).
	NextServerID uint32
	// TableMoves are the table slots changed since version − 1 (9.4),
	// decoded from base64; nil when absent.
	TableMoves []byte
}

// ParseSnapshot reads a snapshot's JSON (a SnapshotView). It checks what
// the JSON holds, not the placement: Snapshot.Placement does that.
func ParseSnapshot(data []byte) (*Snapshot, error) {
	fields, err := objectFields(data, "snapshot")
	if err != nil {
		return nil, err
	}
	s := &Snapshot{}
	var haveConfig, haveNodes bool
	for _, f := range fields {
		if isNull(f.raw) {
			continue
		}
		switch f.name {
		case "ring":
			s.Ring, err = jsonString(f.raw, "ring")
		case "version":
			var v int64
			if v, err = jsonInt(f.raw, "version"); err == nil && v < 0 {
				err = errorf(ErrInvalidSnapshot, "version %d", v)
			}
			s.Version = uint64(v)
		case "config":
			s.Config, err = ParseConfig(f.raw)
			haveConfig = true
		case "nodes":
			s.Nodes, err = ParseNodes(f.raw)
			haveNodes = true
		case "fingerprint":
			if s.Fingerprint, err = jsonString(f.raw, "fingerprint"); err == nil && !isFingerprint(s.Fingerprint) {
				err = errorf(ErrInvalidSnapshot, "fingerprint %q is not 64 lowercase hex digits", excerpt(s.Fingerprint))
			}
		case "buckets":
			s.Buckets, err = ParseBuckets(f.raw)
		case "server_ids":
			err = s.readServerIDs(f.raw)
		case "table_moves":
			var text string
			if text, err = jsonString(f.raw, "table_moves"); err == nil {
				if s.TableMoves, err = base64.StdEncoding.Strict().DecodeString(text); err != nil {
					err = errorf(ErrInvalidTable, "table_moves is not standard base64")
				}
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if !haveConfig || !haveNodes || s.Fingerprint == "" {
		return nil, errorf(ErrInvalidSnapshot, "a snapshot needs config, nodes and fingerprint")
	}
	return s, nil
}

func (s *Snapshot) readServerIDs(raw json.RawMessage) error {
	var v struct {
		IDs  map[string]int64 `json:"ids"`
		Next int64            `json:"next"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.IDs == nil {
		return errorf(ErrInvalidJSON, "server_ids must be {\"ids\": {node: id}, \"next\": id}")
	}
	if v.Next < 0 || v.Next > math.MaxUint32 {
		return errorf(ErrInvalidServerIDs, "next %d is not a u32", v.Next)
	}
	s.ServerIDs, s.NextServerID = make(map[string]uint32, len(v.IDs)), uint32(v.Next)
	for n, id := range v.IDs {
		if id < 0 || id > math.MaxUint32 {
			return errorf(ErrInvalidServerIDs, "node %s has server id %d", excerpt(n), id)
		}
		s.ServerIDs[n] = uint32(id)
	}
	return nil
}

func isFingerprint(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// TableSource gives a table snapshot its table, which the snapshot does
// not carry (9.4). Other algorithms ignore it.
type TableSource struct {
	// Encoding is the body of `GET …/snapshots/{v}/table`: the canonical
	// encoding of this version.
	Encoding []byte
	// Previous is the verified placement of version − 1, to which the
	// snapshot's TableMoves are applied when Encoding is nil. On
	// ErrInvalidTable or ErrFingerprintMismatch, download the table.
	Previous *Placement
}

// Placement rebuilds the snapshot's placement and verifies it: unless it
// hashes to the snapshot's fingerprint, it returns a
// *FingerprintMismatchError and no placement. A table snapshot needs a
// TableSource (ErrTableRequired without one), except with no active node.
func (s *Snapshot) Placement(src TableSource) (*Placement, error) {
	stored := &Stored{Buckets: s.Buckets}
	var p *Placement
	var err error
	switch s.Config.Algorithm {
	case Haproxy:
		if s.ServerIDs == nil {
			return nil, errorf(ErrInvalidServerIDs, "the snapshot carries no server ids")
		}
		if err := s.checkServerIDs(); err != nil {
			return nil, err
		}
		stored.ServerIDs = s.ServerIDs
		p, err = Build(s.Config, s.Nodes, stored)
	case Table:
		p, err = s.tablePlacement(src)
	default:
		p, err = Build(s.Config, s.Nodes, stored)
	}
	if err != nil {
		return nil, err
	}
	if p.fingerprint != s.Fingerprint {
		return nil, &FingerprintMismatchError{Expected: s.Fingerprint, Actual: p.fingerprint}
	}
	p.version = s.Version
	return p, nil
}

// checkServerIDs checks stored ids against the version's nodes (5.8.3):
// every node has one, no two share one, all run from 1 to below next.
func (s *Snapshot) checkServerIDs() error {
	if len(s.ServerIDs) != len(s.Nodes) {
		return errorf(ErrInvalidServerIDs, "the ids do not name exactly the ring's nodes")
	}
	seen := make(map[uint32]bool, len(s.ServerIDs))
	for _, n := range s.Nodes {
		id, ok := s.ServerIDs[n.ID]
		if !ok {
			return errorf(ErrInvalidServerIDs, "the ids do not name exactly the ring's nodes")
		}
		if seen[id] {
			return errorf(ErrInvalidServerIDs, "two nodes share server id %d", id)
		}
		if id == 0 || id >= s.NextServerID {
			return errorf(ErrInvalidServerIDs, "server ids must run from 1 to below next (%d)", s.NextServerID)
		}
		seen[id] = true
	}
	return nil
}

func (s *Snapshot) tablePlacement(src TableSource) (*Placement, error) {
	active := 0
	for _, n := range s.Nodes {
		if n.State == Active {
			active++
		}
	}
	switch {
	case active == 0:
		// Every row is empty (r = 0): nothing to fetch.
		return Build(s.Config, s.Nodes, nil)
	case src.Encoding != nil:
		return s.fromTableEncoding(src.Encoding)
	case src.Previous != nil && s.TableMoves != nil:
		return s.fromMoves(src.Previous)
	}
	return nil, errorf(ErrTableRequired, "the snapshot of version %d carries no table: download …/snapshots/%d/table or apply its moves", s.Version, s.Version)
}

// fromTableEncoding restores the table from the downloaded encoding's
// body (5.6.3); the fingerprint check then covers the whole encoding.
func (s *Snapshot) fromTableEncoding(encoding []byte) (*Placement, error) {
	if err := s.Config.Validate(); err != nil {
		return nil, err
	}
	active, err := normalize(s.Config, s.Nodes)
	if err != nil {
		return nil, err
	}
	start := len(appendHeader(nil, Table, s.Config.Hash, s.Config.ZoneAware, s.Config.ReplicationFactor, active, isRamped(active)))
	if len(encoding) < start {
		return nil, errorf(ErrInvalidTable, "the encoding ends before its table")
	}
	return Build(s.Config, s.Nodes, &Stored{TableBody: encoding[start:]})
}
