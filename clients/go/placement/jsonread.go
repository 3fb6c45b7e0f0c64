package placement

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
)

// Reading configs and nodes from their JSON form (snapshots, vector
// files). Fields are walked in document order because spec 2.4 check 0
// reports, within a config or a node, the first bad field in the
// document. Fields this reader does not know are ignored: a snapshot's
// config carries `membership` and its nodes `labels`, which place nothing,
// and whatever else places keys is in the encoding, so the fingerprint
// check covers it.

// jsonField is one member of a JSON object, in document order.
type jsonField struct {
	name string
	raw  json.RawMessage
}

// objectFields splits a JSON object into its members in document order.
// A repeated member is refused, as the server's reader refuses it.
func objectFields(data []byte, what string) ([]jsonField, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	bad := func(reason string) error { return errorf(ErrInvalidJSON, "%s: %s", what, reason) }
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, bad("not a JSON object")
	}
	var fields []jsonField
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad(err.Error())
		}
		name, _ := tok.(string) // an object's keys are strings
		if seen[name] {
			return nil, bad("field `" + name + "` appears twice")
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, bad(err.Error())
		}
		fields = append(fields, jsonField{name, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad(err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("data after the object")
	}
	return fields, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func jsonString(raw json.RawMessage, what string) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errorf(ErrInvalidJSON, "%s must be a string", what)
	}
	return s, nil
}

func jsonBool(raw json.RawMessage, what string) (bool, error) {
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, errorf(ErrInvalidJSON, "%s must be true or false", what)
	}
	return b, nil
}

// jsonInt reads an integer literal. A value too large for an int64 reads
// as math.MaxInt64, so that it fails its range check with the field's own
// kind (2.4: "also for values not fitting u32") rather than as bad JSON.
func jsonInt(raw json.RawMessage, what string) (int64, error) {
	var n json.Number
	// json.Number also takes a string holding a number: refuse "2".
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] == '"' {
		return 0, errorf(ErrInvalidJSON, "%s must be an integer", what)
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, errorf(ErrInvalidJSON, "%s must be an integer", what)
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	var numErr *strconv.NumError
	switch {
	case err == nil:
		return v, nil
	case errors.As(err, &numErr) && numErr.Err == strconv.ErrRange:
		if n[0] == '-' {
			return math.MinInt64, nil
		}
		return math.MaxInt64, nil
	}
	return 0, errorf(ErrInvalidJSON, "%s must be an integer, not %s", what, n)
}

// clampInt narrows a range-checked-later int64 to int without wrapping on
// 32-bit platforms.
func clampInt(v int64) int {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	if v < math.MinInt32 {
		return math.MinInt32
	}
	return int(v)
}

// ParseConfig reads a ring config from its JSON form (spec 2.1): any subset
// of the eleven fields, the others at their defaults (the hash's default
// depends on the algorithm actually chosen). Unknown fields are ignored.
// Errors follow check 0, then check 1, of spec 2.4.
func ParseConfig(data []byte) (Config, error) {
	fields, err := objectFields(data, "config")
	if err != nil {
		return Config{}, err
	}
	c := DefaultConfig(Ring)
	var hash Hash
	var vnodes, replication, partitions, tableSize int64 = DefaultVnodesPerWeight, DefaultReplicationFactor, DefaultPartitions, DefaultTableSize
	var minRing, maxRing int64 = DefaultMinimumRingSize, DefaultMaximumRingSize
	var avalanche *bool
	for _, f := range fields {
		if isNull(f.raw) {
			continue // null is absent
		}
		switch f.name {
		case "algorithm", "hash":
			name, err := jsonString(f.raw, f.name)
			if err != nil {
				return Config{}, err
			}
			if f.name == "algorithm" {
				c.Algorithm, err = ParseAlgorithm(name)
			} else {
				hash, err = ParseHash(name)
			}
			if err != nil {
				return Config{}, err
			}
		case "vnodes_per_weight":
			vnodes, err = jsonInt(f.raw, f.name)
		case "replication_factor":
			replication, err = jsonInt(f.raw, f.name)
		case "partitions":
			partitions, err = jsonInt(f.raw, f.name)
		case "table_size":
			tableSize, err = jsonInt(f.raw, f.name)
		case "minimum_ring_size":
			minRing, err = jsonInt(f.raw, f.name)
		case "maximum_ring_size":
			maxRing, err = jsonInt(f.raw, f.name)
		case "zone_aware":
			c.ZoneAware, err = jsonBool(f.raw, f.name)
		case "avalanche":
			var b bool
			b, err = jsonBool(f.raw, f.name)
			avalanche = &b
		case "hash_tag":
			c.HashTag, err = jsonString(f.raw, f.name)
			if err == nil {
				err = checkHashTag(c.HashTag) // "" included: a tag is two characters
			}
		}
		if err != nil {
			return Config{}, err
		}
	}
	c.Hash = hash
	if hash == 0 {
		c.Hash = c.Algorithm.DefaultHash()
	}
	c.Avalanche = c.Algorithm == Haproxy
	if avalanche != nil {
		c.Avalanche = *avalanche
	}
	c.VnodesPerWeight, c.ReplicationFactor = clampInt(vnodes), clampInt(replication)
	c.Partitions, c.TableSize = clampInt(partitions), clampInt(tableSize)
	c.MinimumRingSize, c.MaximumRingSize = clampInt(minRing), clampInt(maxRing)
	// Check 0's ranges first, in their order; then check 1.
	if err := c.checkCounts(); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// ParseNode reads one node from its JSON form (a snapshot's node or a
// vector file's record). Absent and null fields take their defaults;
// fields that place nothing (`labels`, health) are ignored. The first bad
// field in the document is reported (2.4 check 0).
func ParseNode(data []byte) (Node, error) {
	fields, err := objectFields(data, "node")
	if err != nil {
		return Node{}, err
	}
	n := NewNode("")
	for _, f := range fields {
		if isNull(f.raw) {
			continue
		}
		var v int64
		switch f.name {
		case "id":
			if n.ID, err = jsonString(f.raw, "id"); err == nil {
				err = checkID(n.ID)
			}
		case "hash_key":
			if n.HashKey, err = jsonString(f.raw, "hash_key"); err == nil {
				if n.HashKey == "" {
					err = errorf(ErrInvalidHashKey, "node %s: hash_key must not be empty", n.ID)
				} else {
					err = checkHashKey(n.HashKey)
				}
			}
		case "zone":
			if n.Zone, err = jsonString(f.raw, "zone"); err == nil {
				err = checkZone(n.Zone)
			}
		case "weight":
			if v, err = jsonInt(f.raw, "weight"); err == nil {
				err = checkWeight(v)
				n.Weight = clampInt(v)
			}
		case "ramp":
			if v, err = jsonInt(f.raw, "ramp"); err == nil {
				err = checkRamp(v)
				n.Ramp = clampInt(v)
			}
		case "state":
			var s string
			if s, err = jsonString(f.raw, "state"); err == nil {
				n.State, err = ParseState(s)
			}
		case "address":
			if n.Address, err = jsonString(f.raw, "address"); err == nil {
				if n.Address == "" {
					err = errorf(ErrInvalidAddress, "node %s: address must not be empty", n.ID)
				} else {
					err = checkAddress(n.Address)
				}
			}
		}
		if err != nil {
			return Node{}, err
		}
	}
	if n.ID == "" {
		return Node{}, errorf(ErrEmptyNodeID, "a node needs an id")
	}
	return n, nil
}

// ParseNodes reads a JSON array of nodes; the first bad node in input
// order is reported, whatever the config (2.4 check 0).
func ParseNodes(data []byte) ([]Node, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, errorf(ErrInvalidJSON, "nodes must be a JSON array of objects")
	}
	nodes := make([]Node, 0, len(raws))
	for _, raw := range raws {
		n, err := ParseNode(raw)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// ParseBuckets reads a jump bucket order as JSON carries it: one node id
// or null (a hole) per bucket, as snapshots and vector files write it, or
// [id or null, count] runs, as ringd's stores do. Consecutive buckets are
// merged into runs.
func ParseBuckets(data []byte) ([]BucketRun, error) {
	var entries []json.RawMessage
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, errorf(ErrInvalidJSON, "a bucket order must be a JSON array")
	}
	runs := make([]BucketRun, 0, len(entries))
	push := func(id string, count int) {
		// A run past the cap is not merged further, so that counts cannot
		// overflow before restoring refuses the order (TooManyPoints).
		if k := len(runs) - 1; k >= 0 && runs[k].ID == id && runs[k].Count <= MaxPoints {
			runs[k].Count += count
			return
		}
		runs = append(runs, BucketRun{id, count})
	}
	for _, e := range entries {
		var id *string
		if err := json.Unmarshal(e, &id); err == nil {
			if id != nil && *id == "" {
				return nil, errorf(ErrInvalidBucketOrder, "a bucket names the empty id")
			}
			push(deref(id), 1)
			continue
		}
		var run []json.RawMessage
		if err := json.Unmarshal(e, &run); err != nil || len(run) != 2 {
			return nil, errorf(ErrInvalidBucketOrder, "not a bucket or a run: %s", excerpt(string(e)))
		}
		if err := json.Unmarshal(run[0], &id); err != nil || id != nil && *id == "" {
			return nil, errorf(ErrInvalidBucketOrder, "a run's owner must be an id or null: %s", excerpt(string(e)))
		}
		count, err := jsonInt(run[1], "a run's count")
		if err != nil || count < 1 || count > MaxPoints {
			return nil, errorf(ErrInvalidBucketOrder, "a run's count must be 1..=%d: %s", MaxPoints, excerpt(string(e)))
		}
		push(deref(id), int(count))
	}
	return runs, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
