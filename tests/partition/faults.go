package partition

import (
	"fmt"
	"net/http"
	"time"
)

// FaultKind is one of the four partitions the test makes.
type FaultKind int

const (
	// LeaderCut cuts the etcd leader from its peers (its peer link down);
	// ringd still reaches it on the client network.
	LeaderCut FaultKind = iota
	// RingdCut cuts one instance from every etcd member (its client link
	// down); the test still reaches it on the front network.
	RingdCut
	// Split separates {e1, r1} from {e2, e3, r2}: e1's peer link down, and
	// blackhole routes between r1 and e2, e3 and between r2 and e1.
	Split
	// Flap takes an instance's client link down and up every
	// FlapHalfPeriod for Hold.
	Flap
)

// Fault is one fault as the run makes it.
type Fault struct {
	Kind  FaultKind
	Round int
	// Instance is the instance cut (RingdCut) or flapped (Flap).
	Instance int
	// E1Leads is, for Split, whether e1 leads etcd when the split begins
	// (the lead is moved there, or away, first).
	E1Leads bool
}

// Name is how tables and messages name the fault.
func (f Fault) Name() string {
	switch f.Kind {
	case LeaderCut:
		return fmt.Sprintf("leader cut from peers #%d", f.Round)
	case RingdCut:
		return fmt.Sprintf("%s cut from etcd #%d", Instances[f.Instance].Name, f.Round)
	case Split:
		lead := "e1 follows"
		if f.E1Leads {
			lead = "e1 leads"
		}
		return fmt.Sprintf("split {e1,r1} from {e2,e3,r2} (%s) #%d", lead, f.Round)
	case Flap:
		return fmt.Sprintf("%s etcd link flapping #%d", Instances[f.Instance].Name, f.Round)
	}
	return "?"
}

// Schedule is every fault twice, the four kinds interleaved; the second
// round cuts and flaps the other instance, and splits with e1 following.
var Schedule = []Fault{
	{Kind: LeaderCut, Round: 1},
	{Kind: RingdCut, Round: 1, Instance: 0},
	{Kind: Split, Round: 1, E1Leads: true},
	{Kind: Flap, Round: 1, Instance: 0},
	{Kind: LeaderCut, Round: 2},
	{Kind: RingdCut, Round: 2, Instance: 1},
	{Kind: Split, Round: 2, E1Leads: false},
	{Kind: Flap, Round: 2, Instance: 1},
}

// splitRoutes are the blackholes of the split: (namespace, address) pairs,
// both directions of r1–e2, r1–e3 and r2–e1 on the client network.
func splitRoutes() [][2]string {
	e1, e2, e3 := Members[0], Members[1], Members[2]
	r1, r2 := Instances[0], Instances[1]
	return [][2]string{
		{r1.NS(), e2.ClientAddr()}, {e2.NS(), r1.ClientAddr()},
		{r1.NS(), e3.ClientAddr()}, {e3.NS(), r1.ClientAddr()},
		{r2.NS(), e1.ClientAddr()}, {e1.NS(), r2.ClientAddr()},
	}
}

// applied is a fault in place: how to heal it and what it cut.
type applied struct {
	detail string
	heal   func() error
}

// prepare gets etcd ready for f before it starts: the lead on e1, or away
// from it, for a split.
func prepare(f Fault, client *http.Client) error {
	if f.Kind != Split {
		return nil
	}
	leader, _, err := WaitAgreedLeader(client, SteadyLimit)
	if err != nil {
		return err
	}
	switch {
	case f.E1Leads && leader != 0:
		return MoveLeader(client, 0)
	case !f.E1Leads && leader == 0:
		return MoveLeader(client, 1)
	}
	return nil
}

// apply makes fault f (a flap runs its whole course here, and is healed
// when it returns).
func apply(f Fault, client *http.Client) (applied, error) {
	switch f.Kind {
	case LeaderCut:
		leader, _, err := WaitAgreedLeader(client, SteadyLimit)
		if err != nil {
			return applied{}, err
		}
		m := Members[leader]
		if err := SetLink(m.PeerLink(), false); err != nil {
			return applied{}, err
		}
		return applied{
			detail: fmt.Sprintf("leader %s's peer link down", m.Name),
			heal:   func() error { return SetLink(m.PeerLink(), true) },
		}, nil
	case RingdCut:
		r := Instances[f.Instance]
		if err := SetLink(r.ClientLink(), false); err != nil {
			return applied{}, err
		}
		return applied{
			detail: fmt.Sprintf("%s's client link down", r.Name),
			heal:   func() error { return SetLink(r.ClientLink(), true) },
		}, nil
	case Split:
		leader, _, err := WaitAgreedLeader(client, SteadyLimit)
		if err != nil {
			return applied{}, err
		}
		if err := SetLink(Members[0].PeerLink(), false); err != nil {
			return applied{}, err
		}
		for _, route := range splitRoutes() {
			if err := Blackhole(route[0], route[1], true); err != nil {
				return applied{}, err
			}
		}
		return applied{
			detail: fmt.Sprintf("%s leading; e1's peer link down; blackholes r1–e2, r1–e3, r2–e1", Members[leader].Name),
			heal: func() error {
				for _, route := range splitRoutes() {
					if err := Blackhole(route[0], route[1], false); err != nil {
						return err
					}
				}
				return SetLink(Members[0].PeerLink(), true)
			},
		}, nil
	case Flap:
		r := Instances[f.Instance]
		end := time.Now().Add(Hold)
		flaps := 0
		for {
			if err := SetLink(r.ClientLink(), false); err != nil {
				return applied{}, err
			}
			time.Sleep(FlapHalfPeriod)
			if err := SetLink(r.ClientLink(), true); err != nil {
				return applied{}, err
			}
			flaps++
			// The last flap ends with the link up: that is the heal.
			if !time.Now().Add(FlapHalfPeriod).Before(end) {
				break
			}
			time.Sleep(FlapHalfPeriod)
		}
		return applied{
			detail: fmt.Sprintf("%s's client link down/up every %v, %d times", r.Name, FlapHalfPeriod, flaps),
			heal:   func() error { return nil },
		}, nil
	}
	return applied{}, fmt.Errorf("unknown fault %d", f.Kind)
}
