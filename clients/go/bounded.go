package ringd

import (
	"math"
	"math/big"

	"github.com/ringd/ringd/clients/go/placement"
)

// BoundedLoad picks, for requests any replica can serve, the first node
// on a key's preference list whose in-flight count is below
// ceil(factor × (total in flight + 1) / active nodes): consistent hashing
// with bounded loads (Mirrokni, Thorup and Zadimoghaddam), the rule of
// HAProxy's hash-balance-factor. The loads are the caller's own, so two
// clients may pick differently for one hot key while the placement, and
// every client's Owner, stay identical: never use it to decide where data
// is written.
type BoundedLoad struct {
	factor float64
}

// NewBoundedLoad takes a balance factor: a finite number of at least 1
// (1 is perfect balance, at the price of moving many requests off their
// owner; 1.25 caps every node at 25 % above the average).
func NewBoundedLoad(factor float64) (BoundedLoad, error) {
	if math.IsNaN(factor) || math.IsInf(factor, 0) || factor < 1 {
		return BoundedLoad{}, invalidOption("balance factor %v: use a number of at least 1, e.g. 1.25", factor)
	}
	return BoundedLoad{factor: factor}, nil
}

// Factor is the balance factor.
func (b BoundedLoad) Factor() float64 { return b.factor }

// Bound is the most requests a node may already have in flight and still
// take one more: ceil(factor × (inFlight + 1) / nodes), with inFlight the
// total over the active nodes. Computed in integers after scaling the
// factor to millionths, as the Rust client does, so every platform
// agrees.
func (b BoundedLoad) Bound(inFlight uint64, nodes int) uint64 {
	if nodes <= 0 {
		return 0
	}
	num := new(big.Int).SetUint64(uint64(math.Round(b.factor * 1e6)))
	num.Mul(num, new(big.Int).Add(new(big.Int).SetUint64(inFlight), big.NewInt(1)))
	den := new(big.Int).Mul(big.NewInt(1_000_000), big.NewInt(int64(nodes)))
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsUint64() {
		return math.MaxUint64
	}
	return q.Uint64()
}

// Pick is the node to send a request for key to under p; load is asked
// once per active node for its in-flight count. False only when no node
// is active.
func (b BoundedLoad) Pick(p *placement.Placement, key []byte, load func(node string) uint64) (string, bool) {
	nodes := p.Nodes()
	if len(nodes) == 0 {
		return "", false
	}
	loads := make(map[string]uint64, len(nodes))
	var total uint64
	for _, n := range nodes {
		l := load(n.ID)
		loads[n.ID] = l
		total += l
	}
	bound := b.Bound(total, len(nodes))
	// Walk the preference list in growing prefixes: a hot key's owner is
	// usually under the bound, and the whole list walks the whole ring.
	checked, r := 0, min(len(nodes), 4)
	for {
		list := p.PreferenceList(key, r)
		for _, id := range list[min(checked, len(list)):] {
			if loads[id] < bound {
				return id, true
			}
		}
		if r == len(nodes) || len(list) == 0 {
			// Only reachable if load answered inconsistently.
			if len(list) == 0 {
				return "", false
			}
			return list[0], true
		}
		checked, r = len(list), min(r*4, len(nodes))
	}
}

// Pick is BoundedLoad.Pick on the version routed on; false before the
// first version or with no active node.
func (c *Client) Pick(b BoundedLoad, key []byte, load func(node string) uint64) (string, bool) {
	v := c.cur.Load()
	if v == nil {
		return "", false
	}
	return b.Pick(v.current.Placement, key, load)
}
