package placement

// envoy_maglev (5.11): the table Envoy's MAGLEV load balancer
// (maglev_lb.cc) builds from the endpoints ringd's xDS server sends, slot
// for slot. Envoy fills as maglev does (labels in byte order, permutations
// from XXH64 with seeds 0 and 1, a turn in round i only while i × weight ≥
// target), but in binary64 on the weights divided by their sum. The EDS
// weights add up to 2^31, so each quotient e / 2^31 is exact, and so is
// every product and running target (all numerators below 2^53): Envoy's
// comparisons are then the integer ones on the EDS weights, and the table
// is maglev's fill on them. Lookups, preference lists, ownership and the
// encoding are maglev's (maglevLayout); only the algorithm code differs.

// buildEnvoyMaglev fills the table of m slots (prime, at least the node
// count) for the active nodes, placed by their labels, with the EDS
// weights of envoyEndpointWeights (5.10.1). The nodes must have passed
// normalize, which refuses a node whose weight comes to 0.
func buildEnvoyMaglev(active []Node, m int) *maglevLayout {
	eds, _ := envoyEndpointWeights(active) // checked by normalize
	weights := make([]uint64, len(eds))
	for i, e := range eds {
		weights[i] = uint64(e)
	}
	return buildMaglev(active, weights, m)
}
