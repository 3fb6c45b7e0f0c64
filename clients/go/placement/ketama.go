package placement

import (
	"crypto/md5"
	"encoding/binary"
	"math"
	"strconv"
)

// buildKetama is libketama's continuum (spec 5.2): each digest k of a
// node, MD5(label ‖ "-" ‖ decimal(k)), gives four little-endian u32
// points; ties sort by node index, libketama's stable order.
func buildKetama(active []Node) *circle {
	digests := ketamaDigests(active)
	var total int
	for _, d := range digests {
		total += 4 * d
	}
	points := make([]point, 0, total)
	for i := range active {
		points = appendDigestPoints(points, active[i].Label(), digests[i], uint32(i))
	}
	return &circle{sortedContinuum(points, 32)}
}

// appendDigestPoints appends the 4 × digests points of one server named
// name (ketama's label, twemproxy's server name).
func appendDigestPoints(points []point, name string, digests int, node uint32) []point {
	buf := append([]byte(name), '-')
	prefix := len(buf)
	for k := 0; k < digests; k++ {
		buf = strconv.AppendInt(buf[:prefix], int64(k), 10)
		d := md5.Sum(buf)
		for w := 0; w < 16; w += 4 {
			points = append(points, point{uint64(binary.LittleEndian.Uint32(d[w:])), node})
		}
	}
	return points
}

// ketamaDigests is every active node's digest count, in index order.
func ketamaDigests(active []Node) []int {
	var total uint64
	for _, n := range active {
		total += uint64(n.Weight)
	}
	out := make([]int, len(active))
	for i, n := range active {
		out[i] = ketamaDigestCount(uint64(n.Weight), total, len(active))
	}
	return out
}

// ketamaDigestCount is libketama's floorf(pct * 40.0 * n) (5.2): pct a
// binary32 quotient, the two multiplications in binary64, left to right,
// and the product narrowed to binary32 before the floor. Every explicit
// conversion rounds, which also keeps the compiler from fusing operations.
func ketamaDigestCount(weight, total uint64, servers int) int {
	pct := float32(weight) / float32(total)
	product := float64(float64(pct)*40.0) * float64(float32(servers))
	return int(math.Floor(float64(float32(product))))
}
