package partition

import (
	"fmt"
	"sort"
	"time"
)

// Violations are the failed checks: each check's name, with one line per
// offending operation or sample.
type Violations struct {
	Names []string
	Lines map[string][]string
	// Heads are a summary line per check, printed before its lines.
	Heads map[string]string
}

// Head sets the summary line of check, which must have failed.
func (v *Violations) Head(check, format string, args ...interface{}) {
	if v.Heads == nil {
		v.Heads = map[string]string{}
	}
	v.Heads[check] = fmt.Sprintf(format, args...)
}

// Add records one offence against check.
func (v *Violations) Add(check, format string, args ...interface{}) {
	if v.Lines == nil {
		v.Lines = map[string][]string{}
	}
	if _, ok := v.Lines[check]; !ok {
		v.Names = append(v.Names, check)
	}
	v.Lines[check] = append(v.Lines[check], fmt.Sprintf(format, args...))
}

// Empty says whether every check passed.
func (v *Violations) Empty() bool { return len(v.Names) == 0 }

// The checks' names, as the report prints them.
const (
	CheckBehind       = "unmarked reads behind an acknowledged write"
	CheckConvergence  = "convergence after etcd has a leader (ConvergeAfterLeader)"
	CheckWorst        = "write answered within WriteAnswerWorst"
	CheckKnown        = "write answered within WriteAnswerKnown once /readyz said 503"
	CheckWaited       = "writes that waited for the heal to succeed"
	CheckRetryAfter   = "503 with Retry-After"
	CheckOutside      = "no 503 outside faults"
	CheckWriteAnswers = "every write acknowledged, none refused"
	CheckReadAnswers  = "reads answer 200/304, or 503"
	CheckTraffic      = "traffic through every path and writer"
)

// at names a time of the run for messages: seconds since the start and
// the episode it falls in.
func (a *Analysis) at(t time.Duration) string {
	if e := a.Episode(t); e >= 0 {
		ep := a.Episodes[e]
		return fmt.Sprintf("%.3f s (%s, %+.3f s from the heal)", t.Seconds(), ep.Fault.Name(), (t - ep.Heal).Seconds())
	}
	return fmt.Sprintf("%.3f s (no fault)", t.Seconds())
}

// CheckAll runs every check on the recorded traffic but linearizability
// and the history's contents (CheckLinearizable, CheckHistory).
func (a *Analysis) CheckAll() *Violations {
	v := &Violations{}
	a.checkReads(v)
	a.checkConvergence(v)
	a.checkWrites(v)
	a.checkTraffic(v)
	return v
}

func (a *Analysis) checkReads(v *Violations) {
	type behind struct {
		r        ReadOp
		versions int64
		age      time.Duration
	}
	var behinds []behind
	for _, r := range a.H.Reads {
		if !r.OK() {
			if r.Status != 503 {
				v.Add(CheckReadAnswers, "%s %s at %s: %s", Instances[r.Instance].Name, r.Path, a.at(r.Invoke), r.Err)
			} else if !a.InFault(r.Instance, r.Invoke, r.Complete) {
				v.Add(CheckOutside, "read %s %s at %s: %s", Instances[r.Instance].Name, r.Path, a.at(r.Invoke), r.Err)
			}
			continue
		}
		if r.Stale {
			continue
		}
		if versions, age := a.Behind(r.Version, r.Invoke); versions > 0 {
			behinds = append(behinds, behind{r, versions, age})
		}
	}
	// The furthest behind first: a few milliseconds behind in steady
	// traffic and seconds behind after a heal are different defects.
	sort.SliceStable(behinds, func(i, j int) bool { return behinds[i].age > behinds[j].age })
	var inFault, outside int
	var maxIn, maxOut time.Duration
	for _, b := range behinds {
		if a.Episode(b.r.Invoke) >= 0 {
			inFault++
			if b.age > maxIn {
				maxIn = b.age
			}
		} else {
			outside++
			if b.age > maxOut {
				maxOut = b.age
			}
		}
	}
	for _, b := range behinds {
		v.Add(CheckBehind, "%s %s invoked at %s answered version %d unmarked, %d behind; version %d had been acknowledged %.3f s before",
			Instances[b.r.Instance].Name, b.r.Path, a.at(b.r.Invoke), b.r.Version, b.versions, b.r.Version+1, b.age.Seconds())
	}
	if len(behinds) > 0 {
		v.Head(CheckBehind, "%d in all, %d during faults (up to %.3f s behind), %d in steady traffic (up to %.3f s behind); the furthest behind first:",
			len(behinds), inFault, maxIn.Seconds(), outside, maxOut.Seconds())
	}
}

func (a *Analysis) checkConvergence(v *Violations) {
	for e, ep := range a.Episodes {
		for _, inst := range Instances {
			c := ep.Converged[inst.Index]
			l := a.LeaderAgain(e, inst.Index)
			switch {
			case c == Never:
				v.Add(CheckConvergence, "%s: %s did not converge within %v of the heal", ep.Fault.Name(), inst.Name, ConvergeLimit)
			case l == Never:
				v.Add(CheckConvergence, "%s: etcd had no leader when %s converged", ep.Fault.Name(), inst.Name)
			case c-l > ConvergeAfterLeader:
				v.Add(CheckConvergence, "%s: %s converged %.3f s after etcd had a leader again (%.3f s after the heal), over %v",
					ep.Fault.Name(), inst.Name, (c - l).Seconds(), (c - ep.Heal).Seconds(), ConvergeAfterLeader)
			}
		}
	}
}

func (a *Analysis) checkWrites(v *Violations) {
	for _, x := range a.H.Attempts {
		w := a.H.Writes[x.Op]
		name := Instances[x.Instance].Name
		known, bound := a.knownBound(x)
		outcome := fmt.Sprintf("%d", x.Status)
		if x.Status == 0 {
			outcome = "no answer: " + x.Err
		}
		switch {
		case x.Status == 0 || x.Latency() > WriteAnswerWorst:
			v.Add(CheckWorst, "%s %s sent at %s: %s after %.3f s", name, w.Key, a.at(x.Sent), outcome, x.Latency().Seconds())
		case known && x.Latency() > WriteAnswerKnown:
			v.Add(CheckKnown, "%s %s sent at %s, /readyz already 503: %s after %.3f s", name, w.Key, a.at(x.Sent), outcome, x.Latency().Seconds())
		}
		if x.Status == 200 {
			for _, ep := range a.Episodes {
				if x.Sent < ep.Heal && x.Done > ep.Heal && x.Latency() > bound {
					v.Add(CheckWaited, "%s %s sent at %s succeeded %.3f s after the heal of %s, after %.3f s",
						name, w.Key, a.at(x.Sent), (x.Done - ep.Heal).Seconds(), ep.Fault.Name(), x.Latency().Seconds())
				}
			}
		}
		if x.Status == 503 {
			if x.RetryAfter == "" {
				v.Add(CheckRetryAfter, "%s %s sent at %s: 503 without Retry-After", name, w.Key, a.at(x.Sent))
			}
			if !a.InFault(x.Instance, x.Sent, x.Done) {
				v.Add(CheckOutside, "write %s %s sent at %s: 503 after %.3f s", name, w.Key, a.at(x.Sent), x.Latency().Seconds())
			}
		}
	}
	for _, w := range a.H.Writes {
		switch {
		case w.Refused != "":
			v.Add(CheckWriteAnswers, "%s %s invoked at %s refused: %s", Instances[w.Instance].Name, w.Key, a.at(w.Invoke), w.Refused)
		case !w.Acked:
			v.Add(CheckWriteAnswers, "%s %s invoked at %s never acknowledged", Instances[w.Instance].Name, w.Key, a.at(w.Invoke))
		}
	}
}

// MinPerPath is the fewest unmarked answers each instance must give on
// each read path, and MinAcksPerWriter the fewest acknowledgements per
// writer, for the run to have tested anything.
const (
	MinPerPath       = 20
	MinAcksPerWriter = 50
)

func (a *Analysis) checkTraffic(v *Violations) {
	for _, inst := range Instances {
		for _, path := range ReadPaths {
			n := 0
			for _, r := range a.H.Reads {
				if r.Instance == inst.Index && r.Path == path && r.OK() && !r.Stale {
					n++
				}
			}
			if n < MinPerPath {
				v.Add(CheckTraffic, "%s answered %s unmarked %d times, fewer than %d", inst.Name, path, n, MinPerPath)
			}
		}
	}
	acks := map[int]int{}
	for _, w := range a.H.Writes {
		if w.Acked {
			acks[w.Client]++
		}
	}
	for _, inst := range Instances {
		for k := 0; k < WritersPerInstance; k++ {
			c := writerClient(inst.Index, k)
			if acks[c] < MinAcksPerWriter {
				v.Add(CheckTraffic, "writer %d (%s) got %d acknowledgements, fewer than %d", c, inst.Name, acks[c], MinAcksPerWriter)
			}
		}
	}
}
