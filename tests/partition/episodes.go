package partition

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Episode is one fault as it happened: when it started and healed, and
// when each instance converged after the heal.
type Episode struct {
	Fault  Fault
	Detail string
	// Start is when the fault began (for a split, when the lead started
	// to move into place); Heal when the last cut was undone; End when
	// the settle period after convergence ended.
	Start, Heal, End time.Duration
	// Converged is, per instance, when it first answered /readyz 200 and
	// then served the newest acknowledged version unmarked after the heal;
	// Never if not within ConvergeLimit.
	Converged [2]time.Duration
}

// runner makes the faults under traffic.
type runner struct {
	traffic *Traffic
	rec     *Recorder
	etcd    *http.Client
	// unsteady says, for each fault that began without etcd agreeing on a
	// leader and both instances ready for SteadyFor, what was missing.
	unsteady []string
}

// waitSteady waits until etcd agrees on a leader and both instances have
// answered /readyz 200 to every poll for SteadyFor.
func (r *runner) waitSteady() error {
	deadline := time.Now().Add(SteadyLimit)
	if _, _, err := WaitAgreedLeader(r.etcd, SteadyLimit); err != nil {
		return err
	}
	for _, inst := range Instances {
		for r.rec.ReadyFor(inst.Index) < SteadyFor {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s not ready for %v on end within %v", inst.Name, SteadyFor, SteadyLimit)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// run makes fault f, holds it, heals it and waits for both instances to
// converge and then Settle.
func (r *runner) run(f Fault) (Episode, error) {
	ep := Episode{Fault: f}
	// Not steady is a finding, not a reason to stop: the fault goes ahead.
	if err := r.waitSteady(); err != nil {
		r.unsteady = append(r.unsteady, fmt.Sprintf("before %s: %v", f.Name(), err))
	}
	ep.Start = r.rec.Clock.Now()
	if err := prepare(f, r.etcd); err != nil {
		return ep, fmt.Errorf("preparing %s: %v", f.Name(), err)
	}
	if f.Kind == Split {
		if err := r.waitSteady(); err != nil {
			r.unsteady = append(r.unsteady, fmt.Sprintf("before %s, once the lead moved: %v", f.Name(), err))
		}
	}
	cutAt := r.rec.Clock.Now()
	a, err := apply(f, r.etcd)
	if err != nil {
		return ep, fmt.Errorf("%s: %v", f.Name(), err)
	}
	ep.Detail = a.detail
	if hold := cutAt + Hold - r.rec.Clock.Now(); hold > 0 {
		time.Sleep(hold)
	}
	if err := a.heal(); err != nil {
		return ep, fmt.Errorf("healing %s: %v", f.Name(), err)
	}
	ep.Heal = r.rec.Clock.Now()
	var wg sync.WaitGroup
	for _, inst := range Instances {
		wg.Add(1)
		go func(inst Instance) {
			defer wg.Done()
			defer Guard("convergence probe")
			ep.Converged[inst.Index] = r.probe(inst, ep.Heal)
		}(inst)
	}
	wg.Wait()
	time.Sleep(Settle)
	ep.End = r.rec.Clock.Now()
	return ep, nil
}

// probe asks inst, from heal on, for /readyz and then the snapshot, until
// /readyz answers 200 and the snapshot is unmarked and at least the
// newest version acknowledged before it was asked for; it returns when
// that snapshot came (Never after ConvergeLimit). Its reads are part of
// the history like any other.
func (r *runner) probe(inst Instance, heal time.Duration) time.Duration {
	for r.rec.Clock.Now() < heal+ConvergeLimit {
		if r.traffic.Ready(inst) {
			x := r.traffic.Read(proberClient(inst.Index), inst, "snapshot", 0, 0)
			r.rec.AddRead(x)
			if x.OK() && !x.Stale && x.Version >= r.rec.NewestAckBefore(x.Invoke) {
				return x.Complete
			}
		}
		time.Sleep(ProbeEvery)
	}
	return Never
}
