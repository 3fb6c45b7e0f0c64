package placement

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"unicode/utf8"
)

// Decode is thin mode (9.2): a placement from a canonical encoding alone,
// as `GET …/snapshots/{v}/table` serves it for every algorithm. The
// encoding's SHA-256 must equal expectedFingerprint (the snapshot's, or
// the ringd-fingerprint header), else *FingerprintMismatchError; an
// encoding that does not decode, or does not re-encode to the same bytes,
// is ErrInvalidEncoding. Malformed input is an error, never a panic.
func Decode(data []byte, expectedFingerprint string) (*Placement, error) {
	sum := sha256.Sum256(data)
	if actual := hex.EncodeToString(sum[:]); actual != expectedFingerprint {
		return nil, &FingerprintMismatchError{Expected: expectedFingerprint, Actual: actual}
	}
	r := &reader{b: data}
	p, err := decodeHeader(r)
	if err != nil {
		return nil, err
	}
	if p.lay, err = decodeBody(p, r); err != nil {
		return nil, err
	}
	if r.failed || r.off != len(data) {
		return nil, errorf(ErrInvalidEncoding, "the body is cut short or followed by %d bytes", len(data)-r.off)
	}
	p.finish()
	// Decoding is only right if it loses nothing: the bytes must come back.
	if !bytes.Equal(p.Encode(), data) {
		return nil, errorf(ErrInvalidEncoding, "the encoding is not canonical")
	}
	return p, nil
}

var zeros [255]byte

// reader reads little-endian integers; past the end it yields zeros and
// records the failure, so decoding code checks once at the end.
type reader struct {
	b      []byte
	off    int
	failed bool
}

func (r *reader) take(n int) []byte {
	if n < 0 || n > len(r.b)-r.off {
		// Callers take at most 255 bytes at a time, or what remains.
		r.failed = true
		r.off = len(r.b)
		return zeros[:min(max(n, 0), len(zeros))]
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) u8() byte    { return r.take(1)[0] }
func (r *reader) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *reader) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }

// remaining is how many bytes are left.
func (r *reader) remaining() int { return len(r.b) - r.off }

func bad(format string, args ...any) error { return errorf(ErrInvalidEncoding, format, args...) }

// decodeHeader parses 9.1's header and node records, refusing what no
// placement encodes (9.2): other magic or version bytes, unknown codes,
// flags other than bit 0, records that break 2.2 or the id order.
func decodeHeader(r *reader) (*Placement, error) {
	if string(r.take(len(magic))) != magic || r.failed {
		return nil, bad("not a ringd placement encoding of format version 1")
	}
	a, h, zoneAware, flags := Algorithm(r.u8()), Hash(r.u8()), r.u8(), r.u8()
	rf, count := r.u32(), r.u32()
	if r.failed {
		return nil, bad("the header ends early")
	}
	if !a.valid() || !h.valid() || !a.accepts(h) {
		return nil, bad("algorithm code %d with hash code %d", a, h)
	}
	if zoneAware > 1 || flags&^flagRamped != 0 {
		return nil, bad("zone_aware byte %d or flags %#02x", zoneAware, flags)
	}
	if rf < 1 || rf > maxReplication {
		return nil, bad("replication factor %d", rf)
	}
	p := &Placement{algorithm: a, hash: h, zoneAware: zoneAware == 1, replicationFactor: int(rf), ramped: flags&flagRamped != 0}
	// Each record takes at least 6 bytes: no count can make us allocate
	// more than the input justifies.
	if uint64(count) > uint64(r.remaining()/6) {
		return nil, bad("%d node records in %d bytes", count, r.remaining())
	}
	p.nodes = make([]Node, count)
	anyRamp := false
	for i := range p.nodes {
		n := NewNode(string(r.take(int(r.u8()))))
		n.Zone = string(r.take(int(r.u8())))
		n.Weight = int(r.u32())
		if p.ramped {
			n.Ramp = int(r.u32())
			anyRamp = anyRamp || n.Ramp != FullRamp
		}
		if a.placesByAddress() {
			n.Address = string(r.take(int(r.u8())))
		}
		if r.failed {
			return nil, bad("node record %d is cut short", i)
		}
		if err := n.Validate(); err != nil {
			return nil, bad("node record %d: %v", i, err)
		}
		if a.placesByAddress() && (n.Address == "" || !utf8.ValidString(n.Address)) {
			return nil, bad("node %s has no address, which %s places by", n.ID, a)
		}
		if (n.Zone != "") != p.zoneAware {
			return nil, bad("node %s: a zone must be written exactly when zone_aware is 1", n.ID)
		}
		if i > 0 && p.nodes[i-1].ID >= n.ID {
			return nil, bad("node records are not in strictly ascending id order")
		}
		p.nodes[i] = n
	}
	if anyRamp != p.ramped {
		return nil, bad("the ramped flag does not match the records' ramps")
	}
	if p.ramped && !a.takesRamps() {
		return nil, bad("%s cannot be ramped", a)
	}
	return p, nil
}

// decodeBody reads the algorithm's body. Checks that the re-encoding
// would not catch (an order a lookup relies on, indices a lookup
// follows) are made here; the rest falls to the re-encoding.
func decodeBody(p *Placement, r *reader) (layout, error) {
	n := len(p.nodes)
	p.keys = keyHasher{algorithm: p.algorithm, hash: p.hash}
	switch p.algorithm {
	case Ring, Ketama, Nginx:
		bits := 32
		if p.algorithm == Ring {
			bits = 64
		}
		points, err := decodePoints(r, n, bits)
		if err != nil {
			return nil, err
		}
		for j := 1; j < len(points); j++ {
			c := byPositionThenNode(points[j-1], points[j])
			if c > 0 || p.algorithm == Nginx && points[j-1].pos == points[j].pos {
				return nil, bad("the points are not in canonical order")
			}
		}
		return &circle{newContinuum(points, bits)}, nil
	case Twemproxy:
		return decodeTwemproxy(p, r)
	case EnvoyRingHash:
		points, err := decodePoints(r, n, 64)
		if err != nil {
			return nil, err
		}
		// Equal positions are in label order, which the encoding cannot
		// show without the labels: the fingerprint vouches for it.
		for j := 1; j < len(points); j++ {
			if points[j-1].pos > points[j].pos {
				return nil, bad("the entries are not sorted by position")
			}
		}
		return &circle{newContinuum(points, 64)}, nil
	case Maglev, EnvoyMaglev:
		// envoy_maglev's body is maglev's, with Envoy's bound on the size.
		m := r.u32()
		if uint64(m)*4 > uint64(r.remaining()) || (m == 0) != (n == 0) || m > 0 && (int(m) < n || int(m) > p.algorithm.maxTableSize() || !isPrime(int(m))) {
			return nil, bad("a %s table of %d slots for %d nodes", p.algorithm, m, n)
		}
		table := make([]uint32, m)
		for i := range table {
			if table[i] = r.u32(); int(table[i]) >= n {
				return nil, bad("slot %d names node %d of %d", i, table[i], n)
			}
		}
		return &maglevLayout{table}, nil
	case Jump:
		return decodeJump(p, r)
	case Rendezvous:
		l := &rendezvousLayout{nodeHashes: make([]uint64, 0, n), weights: p.weights(), uniform: true}
		for i := 0; i < n && !r.failed; i++ {
			l.nodeHashes = append(l.nodeHashes, r.u64())
			l.uniform = l.uniform && l.weights[i] == l.weights[0]
		}
		return l, nil
	case Haproxy:
		avalanche := r.u8()
		ids := make(map[string]uint32, n)
		for i := 0; i < n && !r.failed; i++ {
			ids[p.nodes[i].ID] = r.u32()
		}
		r.take(r.remaining()) // the points: rebuilt below, compared by re-encoding
		if r.failed || avalanche > 1 {
			return nil, bad("a haproxy body with avalanche byte %d", avalanche)
		}
		serverIDs, err := haproxyServerIDs(p.nodes, ids)
		if err != nil {
			return nil, bad("%v", err)
		}
		for _, node := range p.nodes {
			if node.Weight > haproxyMaxWeight {
				return nil, bad("node %s has weight %d; haproxy takes 1..=%d", node.ID, node.Weight, haproxyMaxWeight)
			}
		}
		p.keys.avalanche = avalanche == 1
		return buildHaproxy(p.nodes, serverIDs, p.keys.avalanche), nil
	}
	return decodeTable(p, r)
}

// decodePoints reads a u32 count and that many (position, node) pairs.
func decodePoints(r *reader, n, bits int) ([]point, error) {
	count := r.u32()
	size := uint64(4 + bits/8)
	if uint64(count)*size > uint64(r.remaining()) {
		return nil, bad("%d points in %d bytes", count, r.remaining())
	}
	points := make([]point, count)
	for j := range points {
		if bits == 64 {
			points[j].pos = r.u64()
		} else {
			points[j].pos = uint64(r.u32())
		}
		if points[j].node = r.u32(); int(points[j].node) >= n {
			return nil, bad("a point names node %d of %d", points[j].node, n)
		}
	}
	return points, nil
}

func decodeTwemproxy(p *Placement, r *reader) (layout, error) {
	tagLen := r.u8()
	if tagLen != 0 && tagLen != 2 {
		return nil, bad("a twemproxy hash tag of %d bytes", tagLen)
	}
	tag := string(r.take(int(tagLen)))
	if tag != "" {
		if err := checkHashTag(tag); err != nil {
			return nil, bad("%v", err)
		}
	}
	for _, node := range p.nodes {
		if _, _, problem := twemproxySplitAddress(node.Address); problem != "" {
			return nil, bad("node %s at %q: %s", node.ID, excerpt(node.Address), problem)
		}
	}
	points, err := decodePoints(r, len(p.nodes), 32)
	if err != nil {
		return nil, err
	}
	// Equal positions are in server-name order, which the encoding cannot
	// show without the names: the fingerprint vouches for it.
	for j := 1; j < len(points); j++ {
		if points[j-1].pos > points[j].pos {
			return nil, bad("the points are not sorted by position")
		}
	}
	p.keys.tag = tag
	return &twemproxyLayout{circle{newContinuum(points, 32)}, tag}, nil
}

func decodeJump(p *Placement, r *reader) (layout, error) {
	count := r.u32()
	if uint64(count)*4 > uint64(r.remaining()) {
		return nil, bad("%d buckets in %d bytes", count, r.remaining())
	}
	var runs []BucketRun
	for k := uint32(0); k < count; k++ {
		id := ""
		if b := r.u32(); b != jumpHole {
			if int(b) >= len(p.nodes) {
				return nil, bad("a bucket names node %d of %d", b, len(p.nodes))
			}
			id = p.nodes[b].ID
		}
		if last := len(runs) - 1; last >= 0 && runs[last].ID == id {
			runs[last].Count++
		} else {
			runs = append(runs, BucketRun{id, 1})
		}
	}
	l, err := restoreJump(p.nodes, runs)
	if err != nil {
		return nil, bad("%v", err)
	}
	return l, nil
}

// decodeTable restores a table body with its own partition count, which
// must be one 2.1 allows; r = min(replication_factor, nodes) (9.2).
func decodeTable(p *Placement, r *reader) (layout, error) {
	body := r.take(r.remaining())
	if len(body) < 4 || !validPartitions(int64(binary.LittleEndian.Uint32(body))) {
		return nil, bad("a table body without a valid partition count")
	}
	l, err := restoreTableBody(len(p.nodes), int(binary.LittleEndian.Uint32(body)), p.replicationFactor, body)
	if err != nil {
		return nil, bad("%v", err)
	}
	return l, nil
}
