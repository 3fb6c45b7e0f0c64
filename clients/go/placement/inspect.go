package placement

// Inspection of each algorithm's layout: what the encoding carries, for
// tools and tests. Each returns nil under the other algorithms.

// Point is a position on a circle and the id of the node it belongs to.
type Point struct {
	// Position is the point's place on the circle (the key hash space).
	Position uint64
	// ID is the owning node's id.
	ID string
}

// Points returns the sorted point list of ring, ketama, nginx and
// twemproxy, and envoy_ring_hash's entries (ties in the algorithm's
// order), and HAProxy's own points (not their boundaries) for haproxy.
func (p *Placement) Points() []Point {
	var points []point
	switch l := p.lay.(type) {
	case *circle:
		points = l.points
	case *twemproxyLayout:
		points = l.points
	case *haproxyLayout:
		points = l.points
	default:
		return nil
	}
	out := make([]Point, len(points))
	for i, pt := range points {
		out[i] = Point{pt.pos, p.nodes[pt.node].ID}
	}
	return out
}

// MaglevTable returns the lookup table of maglev or envoy_maglev as node
// ids, slot by slot.
func (p *Placement) MaglevTable() []string {
	l, ok := p.lay.(*maglevLayout)
	if !ok {
		return nil
	}
	out := make([]string, len(l.table))
	for i, o := range l.table {
		out[i] = p.nodes[o].ID
	}
	return out
}

// BucketOrder returns jump's bucket order as runs ("" marks holes); empty,
// not nil, for a jump placement with no active node.
func (p *Placement) BucketOrder() []BucketRun {
	l, ok := p.lay.(*jumpLayout)
	if !ok {
		return nil
	}
	return l.runs(p.nodes)
}

// ServerIDs returns each active node's haproxy server id.
func (p *Placement) ServerIDs() map[string]uint32 {
	l, ok := p.lay.(*haproxyLayout)
	if !ok {
		return nil
	}
	out := make(map[string]uint32, len(l.serverIDs))
	for i, s := range l.serverIDs {
		out[p.nodes[i].ID] = s
	}
	return out
}

// TableRows returns table's rows of node ids, primary first, partition by
// partition.
func (p *Placement) TableRows() [][]string {
	l, ok := p.lay.(*tableLayout)
	if !ok {
		return nil
	}
	rows := make([][]string, l.partitions)
	for r := range rows {
		rows[r] = make([]string, l.replicas)
		for k, o := range l.row(r) {
			rows[r][k] = p.nodes[o].ID
		}
	}
	return rows
}

// HashTag returns twemproxy's hash tag, "" when keys are hashed whole.
func (p *Placement) HashTag() string { return p.keys.tag }
