package placement

import "math/big"

// Ownership is section 7's report: each active node's exact integer units
// out of a total, and the floats derived from them.
type Ownership struct {
	// Basis names what the units count: arcs, table_entries, buckets,
	// weights or partitions.
	Basis string
	// TotalUnits is the units' sum: 2^64 for ring, so a big.Int; 0 with no
	// active node.
	TotalUnits *big.Int
	// Nodes are the active nodes in id order.
	Nodes []NodeShare
	// MaxOverMean is the largest Ratio, 0 with no node.
	MaxOverMean float64
}

// NodeShare is one node's part of an Ownership.
type NodeShare struct {
	// ID is the node's id.
	ID string
	// Units is the node's exact units.
	Units *big.Int
	// Share is f64(Units) / f64(TotalUnits).
	Share float64
	// ExpectedShare is the node's scaled weight over their sum, in binary64.
	ExpectedShare float64
	// Ratio is Share / ExpectedShare.
	Ratio float64
	// Replicas is, under table only, the number of table cells (primary or
	// not) holding the node; 0 otherwise.
	Replicas int
}

// Ownership computes section 7's report. The floats follow the spec's
// normative recipe, so they equal the server's bit for bit: each integer
// converted to binary64 (round to nearest) once, then one division.
func (p *Placement) Ownership() Ownership {
	units, total := p.lay.units(len(p.nodes))
	if len(p.nodes) == 0 {
		total = u128{}
	}
	var weightTotal uint64
	for i := range p.nodes {
		weightTotal += p.nodes[i].scaledWeight()
	}
	var replicas []int
	if t, ok := p.lay.(*tableLayout); ok {
		replicas = t.replicaCounts(len(p.nodes))
	}
	o := Ownership{Basis: p.lay.basis(), TotalUnits: total.big(), Nodes: make([]NodeShare, len(p.nodes))}
	totalF := total.float64()
	for i := range p.nodes {
		s := NodeShare{ID: p.nodes[i].ID, Units: units[i].big()}
		s.Share = units[i].float64() / totalF
		s.ExpectedShare = float64(p.nodes[i].scaledWeight()) / float64(weightTotal)
		s.Ratio = s.Share / s.ExpectedShare
		if replicas != nil {
			s.Replicas = replicas[i]
		}
		o.MaxOverMean = max(o.MaxOverMean, s.Ratio)
		o.Nodes[i] = s
	}
	return o
}

func (x u128) big() *big.Int {
	v := new(big.Int).SetUint64(x.hi)
	v.Lsh(v, 64)
	return v.Or(v, new(big.Int).SetUint64(x.lo))
}

// float64 rounds x to the nearest binary64, ties to even.
func (x u128) float64() float64 {
	f, _ := new(big.Float).SetInt(x.big()).Float64()
	return f
}
