package partition

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Figures are what one instance saw during one episode (from its start to
// its end).
type Figures struct {
	Acks int
	// N503 counts write attempts answered 503; Max503 and Median503 are
	// how long those answers took from sending.
	N503              int
	Max503, Median503 time.Duration
	// Known counts write attempts sent after /readyz had already answered
	// 503; MaxKnown is the longest of them, KnownOver how many took more
	// than WriteAnswerKnown.
	Known     int
	MaxKnown  time.Duration
	KnownOver int
	// Slow counts write attempts that took more than WriteAnswerWorst or
	// got no answer.
	Slow int
	// WaitedForHeal counts writes sent before the heal that succeeded
	// after it, later than the bound that applied to them.
	WaitedForHeal int
	// Gap is the longest time between consecutive acknowledged writes
	// through the instance across the episode.
	Gap time.Duration
	// Stale counts reads answered with Ringd-Stale; StaleMaxVersions and
	// StaleMaxAge are how far behind the furthest of them was.
	Stale            int
	StaleMaxVersions int64
	StaleMaxAge      time.Duration
	// Behind counts unmarked reads behind a write acknowledged before they
	// were sent, and how far (versions, and how long the newer version had
	// been acknowledged).
	Behind            int
	BehindMaxVersions int64
	BehindMaxAge      time.Duration
	// FailedReads counts reads that got no version (503, timeouts).
	FailedReads int
	// FromHeal and FromLeader are the convergence times after the heal and
	// after etcd had a leader again (Never: did not converge).
	FromHeal, FromLeader time.Duration
}

// knownBound is the bound on attempt x: WriteAnswerKnown if x's instance
// had already said 503 on /readyz when it was sent and still said so to
// the next poll, else WriteAnswerWorst. The poll after matters: an
// instance can become current between a poll and the write, and then
// rightly gives the write the longer deadline of a current instance.
func (a *Analysis) knownBound(x Attempt) (bool, time.Duration) {
	if a.ReadyAt(x.Instance, x.Sent) == 503 && a.ReadyAfter(x.Instance, x.Sent) == 503 {
		return true, WriteAnswerKnown
	}
	return false, WriteAnswerWorst
}

// FiguresOf computes instance inst's figures for episode e.
func (a *Analysis) FiguresOf(e, inst int) Figures {
	ep := a.Episodes[e]
	in := func(t time.Duration) bool { return t >= ep.Start && t <= ep.End }
	var f Figures
	var lat503 []time.Duration
	for _, w := range a.H.Writes {
		if w.Instance == inst && w.Acked && in(w.Complete) {
			f.Acks++
		}
	}
	for _, x := range a.H.Attempts {
		if x.Instance != inst || !in(x.Sent) {
			continue
		}
		if x.Status == 503 {
			f.N503++
			lat503 = append(lat503, x.Latency())
		}
		known, bound := a.knownBound(x)
		if known {
			f.Known++
			if x.Latency() > f.MaxKnown {
				f.MaxKnown = x.Latency()
			}
			if x.Latency() > WriteAnswerKnown {
				f.KnownOver++
			}
		}
		if x.Status == 0 || x.Latency() > WriteAnswerWorst {
			f.Slow++
		}
		if x.Status == 200 && x.Sent < ep.Heal && x.Done > ep.Heal && x.Latency() > bound {
			f.WaitedForHeal++
		}
	}
	if len(lat503) > 0 {
		sort.Slice(lat503, func(i, j int) bool { return lat503[i] < lat503[j] })
		f.Max503 = lat503[len(lat503)-1]
		f.Median503 = lat503[len(lat503)/2]
	}
	f.Gap = longestGap(a.ackTimes[inst], ep.Start, ep.End)
	for _, r := range a.H.Reads {
		if r.Instance != inst || !in(r.Invoke) {
			continue
		}
		if !r.OK() {
			f.FailedReads++
			continue
		}
		versions, age := a.Behind(r.Version, r.Invoke)
		if r.Stale {
			f.Stale++
			if versions > f.StaleMaxVersions {
				f.StaleMaxVersions = versions
			}
			if age > f.StaleMaxAge {
				f.StaleMaxAge = age
			}
		} else if versions > 0 {
			f.Behind++
			if versions > f.BehindMaxVersions {
				f.BehindMaxVersions = versions
			}
			if age > f.BehindMaxAge {
				f.BehindMaxAge = age
			}
		}
	}
	f.FromHeal, f.FromLeader = Never, Never
	if c := ep.Converged[inst]; c != Never {
		f.FromHeal = c - ep.Heal
		if l := a.LeaderAgain(e, inst); l != Never {
			f.FromLeader = c - l
			if f.FromLeader < 0 {
				f.FromLeader = 0
			}
		}
	}
	return f
}

// longestGap is the longest time between consecutive times of ts (sorted)
// among the pairs that overlap [from, to]; with no time in it, the whole
// stretch from the last time before it to the first after it.
func longestGap(ts []time.Duration, from, to time.Duration) time.Duration {
	var longest time.Duration
	for i := 1; i < len(ts); i++ {
		if ts[i] > from && ts[i-1] < to && ts[i]-ts[i-1] > longest {
			longest = ts[i] - ts[i-1]
		}
	}
	return longest
}

// secs prints a duration in seconds, "-" for Never.
func secs(d time.Duration) string {
	if d == Never {
		return "never"
	}
	return fmt.Sprintf("%.2f", d.Seconds())
}

// FiguresTable is every episode's figures per instance, as a Markdown
// table.
func (a *Analysis) FiguresTable() string {
	var b strings.Builder
	b.WriteString("| fault | inst | acks | 503s | 503 latency max / median s | sent after /readyz 503: n, max s | writes > 3 s | longest write gap s | stale reads (max behind: versions, s) | unmarked behind (n, max versions, max s) | converged after heal s | after etcd leader s |\n")
	b.WriteString("|---|---|---:|---:|---|---|---:|---:|---|---|---:|---:|\n")
	for e, ep := range a.Episodes {
		for _, inst := range Instances {
			f := a.FiguresOf(e, inst.Index)
			lat := "-"
			if f.N503 > 0 {
				lat = fmt.Sprintf("%s / %s", secs(f.Max503), secs(f.Median503))
			}
			known := "0"
			if f.Known > 0 {
				known = fmt.Sprintf("%d, %s", f.Known, secs(f.MaxKnown))
			}
			stale := "0"
			if f.Stale > 0 {
				stale = fmt.Sprintf("%d (%d, %s)", f.Stale, f.StaleMaxVersions, secs(f.StaleMaxAge))
			}
			behind := "0"
			if f.Behind > 0 {
				behind = fmt.Sprintf("%d (%d, %s)", f.Behind, f.BehindMaxVersions, secs(f.BehindMaxAge))
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %d | %s | %s | %s | %s | %s |\n",
				ep.Fault.Name(), inst.Name, f.Acks, f.N503, lat, known, f.Slow, secs(f.Gap),
				stale, behind, secs(f.FromHeal), secs(f.FromLeader))
		}
	}
	return b.String()
}

// Timeline is one line per episode: what was cut, and when it healed and
// each instance converged.
func (a *Analysis) Timeline() string {
	var b strings.Builder
	for e, ep := range a.Episodes {
		fmt.Fprintf(&b, "%-48s %-62s start %7.2f s, heal +%.2f s, etcd leader +%s s, converged r1 +%s s, r2 +%s s\n",
			ep.Fault.Name(), ep.Detail, ep.Start.Seconds(), (ep.Heal - ep.Start).Seconds(),
			sinceHeal(a.LeaderAgain(e, 0), ep.Heal), sinceHeal(ep.Converged[0], ep.Heal), sinceHeal(ep.Converged[1], ep.Heal))
	}
	return b.String()
}

func sinceHeal(t, heal time.Duration) string {
	if t == Never {
		return "never"
	}
	return fmt.Sprintf("%.2f", (t - heal).Seconds())
}
