package placement

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// The bucket table must answer exactly as a binary search over the points
// (5.1's successor rule): clustered points, ties, a point on a bucket's
// last position and long empty stretches, on both circle sizes.
func TestBucketAnswersEqualTheSuccessorSearch(t *testing.T) {
	for _, space := range []int{32, 64} {
		top := uint64(1<<space - 1)
		if space == 64 {
			top = ^uint64(0)
		}
		// top>>1 is the last position of a bucket; top>>3 − 1 the one before
		// another's last, which the next point owns.
		pts := []point{{0, 0}, {5, 1}, {5, 2}, {6, 3}, {top, 4}, {top >> 1, 2}, {top>>3 - 1, 1}}
		for k := range uint64(40) {
			pts = append(pts, point{top>>2 + 1 + k*7, uint32(k % 5)})
		}
		c := sortedContinuum(pts, space)
		search := func(h uint64) int {
			i := sort.Search(len(c.points), func(i int) bool { return c.points[i].pos >= h })
			if i == len(c.points) {
				return 0
			}
			return i
		}
		var probes []uint64
		for _, p := range c.points {
			probes = append(probes, p.pos-1, p.pos, p.pos+1)
		}
		for k := range uint64(5000) {
			probes = append(probes, (k*0x9E3779B97F4A7C15)>>(64-space))
		}
		for _, h := range probes {
			if h > top {
				continue
			}
			want := search(h)
			if got := c.successor(h); got != want {
				t.Fatalf("%d-bit circle: successor(%d) = %d, want %d", space, h, got, want)
			}
			if got, _ := c.ownerIndex(h); got != c.points[want].node {
				t.Fatalf("%d-bit circle: ownerIndex(%d) = %d, want %d", space, h, got, c.points[want].node)
			}
		}
	}
}

// A circle with one point gives it every position, and an empty one no
// owner.
func TestBucketTableEdges(t *testing.T) {
	c := sortedContinuum([]point{{1 << 40, 7}}, 64)
	for _, h := range []uint64{0, 1 << 40, 1<<40 + 1, ^uint64(0)} {
		if o, ok := c.ownerIndex(h); !ok || o != 7 {
			t.Fatalf("ownerIndex(%d) = %d, %v; want 7, true", h, o, ok)
		}
	}
	empty := sortedContinuum(nil, 32)
	if o, ok := empty.ownerIndex(12345); ok {
		t.Fatalf("empty circle: ownerIndex = %d, true; want false", o)
	}
}

// Random circles, with runs of equal positions and points on buckets'
// last positions, answer as the binary search does for every probe near
// a point and for random probes: each bucket kind and the fallback for a
// probe sharing a one-point bucket's split bits are exercised.
func TestBucketKindsOnRandomCircles(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, space := range []int{32, 64} {
		for _, n := range []int{1, 2, 3, 100, 5000, 70000} {
			pts := make([]point, n)
			for i := range pts {
				pts[i] = point{rng.Uint64() >> (64 - space), uint32(rng.IntN(50))}
				switch i % 97 {
				case 1:
					pts[i].pos = pts[i-1].pos // a tie
				case 2:
					pts[i].pos |= 1<<(space-10) - 1 // often a bucket's last position
				}
			}
			c := sortedContinuum(pts, space)
			kinds := map[uint32]int{}
			for _, b := range c.buckets {
				kinds[b.word&^payloadMask]++
			}
			if n >= 5000 && (kinds[kindNone] == 0 || kinds[kindOne] == 0 || kinds[kindMany] == 0) {
				t.Fatalf("%d points on a %d-bit circle: bucket kinds %v, want all three", n, space, kinds)
			}
			probe := func(h uint64) {
				i := sort.Search(len(c.points), func(i int) bool { return c.points[i].pos >= h }) % len(c.points)
				if got, _ := c.ownerIndex(h); got != c.points[i].node {
					t.Fatalf("%d points, %d-bit: ownerIndex(%#x) = %d, want %d", n, space, h, got, c.points[i].node)
				}
				if got := c.successor(h); got != i {
					t.Fatalf("%d points, %d-bit: successor(%#x) = %d, want %d", n, space, h, got, i)
				}
			}
			top := ^uint64(0) >> (64 - space)
			for _, p := range c.points {
				for _, h := range []uint64{p.pos - 1, p.pos, p.pos + 1, p.pos + 1<<20, p.pos - 1<<20} {
					probe(h & top)
				}
			}
			for range 20000 {
				probe(rng.Uint64() >> (64 - space))
			}
		}
	}
}

// sortPoints orders as byPositionThenNode: ties, both circle sizes, node
// indices above a byte, lists below and above the radix threshold.
func TestSortPointsIsTheSpecOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{0, 1, 255, 256, 5000} {
		for _, space := range []int{32, 64} {
			pts := make([]point, n)
			for i := range pts {
				pts[i] = point{rng.Uint64() >> (64 - space), uint32(rng.IntN(70000))}
				if i%5 == 1 {
					pts[i].pos = pts[i-1].pos
				}
			}
			want := slices.Clone(pts)
			slices.SortFunc(want, byPositionThenNode)
			sortPoints(pts)
			if !slices.Equal(pts, want) {
				t.Fatalf("%d points, %d-bit: radix order differs from byPositionThenNode", n, space)
			}
		}
	}
}
