package placement

import (
	"cmp"
	"math"
	"math/bits"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// envoyWeightTotal is the sum of the EDS weights ringd gives the
// endpoints of an envoy_ring_hash or envoy_maglev ring (5.10.1). gRPC
// first turns each weight into a 31-bit fixed-point fraction of its
// locality's sum, Envoy divides the weights by their sum in binary64; the
// two agree exactly only when the sum is a power of two at most 2^31 in
// one locality.
const envoyWeightTotal = 1 << 31

// envoyAddressProblem says why address cannot be an xDS endpoint's, or ""
// (5.10.4): an IP address and a port 1..=65,535, written as Envoy writes
// it back (Rust's SocketAddr form: IPv4 dotted decimal without leading
// zeros, IPv6 in brackets in RFC 5952 form, IPv4-mapped as
// [::ffff:1.2.3.4]), with no IPv6 zone, since EDS resolves no host names.
// netip.AddrPort.String writes that same form for every address without a
// zone, so an address is canonical when it reads back as written.
func envoyAddressProblem(address string) string {
	ap, err := netip.ParseAddrPort(address)
	switch {
	case err != nil:
		return "an xDS endpoint needs an IP address and a port, as `10.0.0.1:8080` or `[2001:db8::1]:8080` (EDS does not resolve host names)"
	case ap.Port() == 0:
		return "the port must be from 1 to 65535"
	case ap.Addr().Zone() != "":
		return "an xDS endpoint's address takes no IPv6 zone"
	case ap.String() != address:
		return "write the address as Envoy writes it back: IPv4 without leading zeros, IPv6 in brackets in its shortest lowercase form (RFC 5952)"
	}
	return ""
}

// checkEnvoyNodes is check 3a for envoy_ring_hash and envoy_maglev
// (5.10.4, 5.11), after every active node was found to have an address:
// every node's address (every is in id order, any state, so that a node
// no proxy could be given is refused when it is written, not when it is
// activated), then among the active nodes distinct labels
// (EndpointKeyTaken: the first shared label in byte order, its first two
// nodes by id), distinct addresses (DuplicateAddress: gRPC keys its
// endpoints by address) and a share of 2^31 for each
// (WeightShareTooSmall).
func checkEnvoyNodes(every, active []Node) error {
	for _, n := range every {
		if n.Address == "" {
			continue
		}
		if p := envoyAddressProblem(n.Address); p != "" {
			return errorf(ErrAddressNotServer, "node %s at %q: %s", n.ID, excerpt(n.Address), p)
		}
	}
	// active is in id order and the sorts are stable: equal keys stay in
	// id order.
	byLabel := slices.Clone(active)
	slices.SortStableFunc(byLabel, func(a, b Node) int { return strings.Compare(a.Label(), b.Label()) })
	for i := 1; i < len(byLabel); i++ {
		if a, b := byLabel[i-1], byLabel[i]; a.Label() == b.Label() {
			// Ids are unique, so one of the two has a hash_key.
			return errorf(ErrEndpointKeyTaken, "nodes %s and %s would both be hashed as %q by Envoy and gRPC (an endpoint is hashed by its hash_key, else its id): give one a distinct hash_key", a.ID, b.ID, excerpt(a.Label()))
		}
	}
	byAddress := slices.Clone(active)
	slices.SortStableFunc(byAddress, func(a, b Node) int { return strings.Compare(a.Address, b.Address) })
	for i := 1; i < len(byAddress); i++ {
		if a, b := byAddress[i-1], byAddress[i]; a.Address == b.Address {
			return errorf(ErrDuplicateAddress, "nodes %s and %s share the address %q, and gRPC keys endpoints by address", a.ID, b.ID, excerpt(a.Address))
		}
	}
	_, err := envoyEndpointWeights(active)
	return err
}

// envoyEndpointWeights are the EDS weights ringd gives the active nodes,
// in their (index) order (5.10.1): 2^31 shared out in proportion to each
// scaled weight s = weight × ramp by largest remainders, e = ⌊s × 2^31 /
// S⌋ in exact integers (s × 2^31 < 2^67: a 128-bit product), one more
// each to the largest remainders, equal remainders in label byte order.
// A node whose weight comes to 0 cannot be an endpoint (EDS weights start
// at 1): WeightShareTooSmall names the first in id order. Nil with no
// node.
func envoyEndpointWeights(active []Node) ([]uint32, error) {
	var total uint64
	for i := range active {
		total += active[i].scaledWeight()
	}
	if total == 0 {
		return nil, nil
	}
	weights := make([]uint32, len(active))
	remainders := make([]uint64, len(active))
	var given uint64
	for i := range active {
		// hi = s >> 33 < s ≤ total, so the quotient fits 64 bits and
		// Div64 cannot panic; it is at most 2^31.
		hi, lo := bits.Mul64(active[i].scaledWeight(), envoyWeightTotal)
		q, r := bits.Div64(hi, lo, total)
		weights[i], remainders[i] = uint32(q), r
		given += q
	}
	order := make([]int, len(active))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(remainders[b], remainders[a]); c != 0 {
			return c
		}
		return strings.Compare(active[a].Label(), active[b].Label())
	})
	// Fewer than one unit per node is left over.
	for _, i := range order[:envoyWeightTotal-given] {
		weights[i]++
	}
	for i, w := range weights {
		if w == 0 {
			return nil, errorf(ErrWeightShareTooSmall, "node %s has %d of the %d total weight (weight × ramp), less than one part in 2^31, the smallest share an xDS endpoint can have: raise its weight or ramp, or lower the others'", active[i].ID, active[i].scaledWeight(), total)
		}
	}
	return weights, nil
}

// envoyEntryCounts is how many entries each endpoint gets, the endpoints
// in the order the proxy takes them with their EDS weights (5.10.2):
// Envoy's RingHashLoadBalancer::Ring and grpc-go's newRing step for step,
// in binary64 with every operation rounded on its own.
func envoyEntryCounts(weights []uint32, minimum, maximum int) []int {
	var sum uint64
	for _, w := range weights {
		sum += uint64(w)
	}
	normalized := make([]float64, len(weights))
	lightest := 1.0
	for j, w := range weights {
		normalized[j] = float64(w) / float64(sum)
		lightest = min(lightest, normalized[j])
	}
	scale := min(math.Ceil(lightest*float64(minimum))/lightest, float64(maximum))
	counts := make([]int, len(weights))
	var target, current float64
	for j, x := range normalized {
		// The Go spec lets a compiler fuse target + scale*x into one
		// multiply-add (an FMA instruction, as on arm64, ppc64le or
		// s390x), whose single rounding can end the loop below one entry
		// sooner or later than Envoy's and gRPC's separate roundings. An
		// explicit conversion rounds the product on its own, which the
		// spec says prevents that fusion.
		target += float64(scale * x)
		for current < target {
			counts[j]++
			current++
		}
	}
	return counts
}

// envoyEntryTotal is the number of entries the active nodes (checked)
// place, for the point cap (2.4 check 5), counted as the Rust core counts
// it: over the weights in index order.
func envoyEntryTotal(active []Node, minimum, maximum int) uint64 {
	weights, err := envoyEndpointWeights(active)
	if err != nil || len(weights) == 0 {
		return 0
	}
	var total uint64
	for _, k := range envoyEntryCounts(weights, minimum, maximum) {
		total += uint64(k)
	}
	return total
}

// buildEnvoyRingHash is the ring Envoy and gRPC build from ringd's EDS
// endpoints (5.10.2): the endpoints in label byte order (gRPC sorts them
// so, and ringd's xDS server sends them so, since Envoy keeps the order
// it is sent) with their weights of envoyEndpointWeights. Its body and
// lookups are ring's (5.10.3, 6.1, 9.1). The nodes must have passed
// normalize.
func buildEnvoyRingHash(active []Node, minimum, maximum int) *circle {
	weights, _ := envoyEndpointWeights(active) // checked by normalize
	order := make([]int, len(active))
	for i := range order {
		order[i] = i
	}
	// Labels are distinct (EndpointKeyTaken), so this order is total.
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(active[a].Label(), active[b].Label()) })
	labels := make([]string, len(order))
	inOrder := make([]uint32, len(order))
	for e, i := range order {
		labels[e], inOrder[e] = active[i].Label(), weights[i]
	}
	points := envoyEntries(labels, inOrder, minimum, maximum)
	for k := range points {
		points[k].node = uint32(order[points[k].node])
	}
	return &circle{newContinuum(points, 64)}
}

// envoyEntries is the ring of endpoints (hash key, EDS weight) in the
// order the proxy takes them: endpoint e's entry i at XXH64(key_e ‖ "_" ‖
// decimal(i), 0), each point's node being e, sorted by position, stably:
// equal positions (two strings with one 64-bit XXH64, never seen) keep
// generation order. Envoy's std::sort and gRPC's sort.Slice are not
// stable and leave such a tie in no defined order.
func envoyEntries(keys []string, weights []uint32, minimum, maximum int) []point {
	if len(keys) == 0 {
		return nil
	}
	counts := envoyEntryCounts(weights, minimum, maximum)
	total := 0
	for _, k := range counts {
		total += k
	}
	points := make([]point, 0, total)
	var buf []byte
	for e, key := range keys {
		buf = append(append(buf[:0], key...), '_')
		prefix := len(buf)
		for i := 0; i < counts[e]; i++ {
			buf = strconv.AppendInt(buf[:prefix], int64(i), 10)
			points = append(points, point{xxhash.Sum64(buf), uint32(e)})
		}
	}
	// Nodes ascend in generation order, so the order of (position, node)
	// is the stable order by position.
	sortPoints(points)
	return points
}
