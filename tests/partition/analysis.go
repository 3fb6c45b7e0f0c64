package partition

import (
	"sort"
	"time"
)

// Analysis indexes what a run recorded, for the figures and the checks.
type Analysis struct {
	H        History
	Episodes []Episode
	// acks are every acknowledged write, by completion.
	acks []ackPoint
	// ackTimes are, per instance, the completions of its acknowledged
	// writes, in order.
	ackTimes [2][]time.Duration
	// ready are, per instance, its /readyz polls by completion.
	ready [2][]ReadyPoll
	// leaderAgain is, per episode and instance, when etcd reachable from
	// the instance had a leader again, for good, after the heal.
	leaderAgain [][2]time.Duration
}

// Analyze indexes h; eps are the faults as they happened.
func Analyze(h History, eps []Episode) *Analysis {
	a := &Analysis{H: h, Episodes: eps}
	for _, w := range h.Writes {
		if w.Acked {
			a.acks = append(a.acks, ackPoint{w.Complete, w.Version})
			a.ackTimes[w.Instance] = append(a.ackTimes[w.Instance], w.Complete)
		}
	}
	sort.Slice(a.acks, func(i, j int) bool { return a.acks[i].at < a.acks[j].at })
	for i := range a.ackTimes {
		ts := a.ackTimes[i]
		sort.Slice(ts, func(x, y int) bool { return ts[x] < ts[y] })
	}
	for _, p := range h.Ready {
		a.ready[p.Instance] = append(a.ready[p.Instance], p)
	}
	for _, ep := range eps {
		var again [2]time.Duration
		for i := range Instances {
			until := ep.Converged[i]
			if until == Never {
				until = ep.Heal + ConvergeLimit
			}
			again[i] = a.leaderSince(ep.Heal, until)
		}
		a.leaderAgain = append(a.leaderAgain, again)
	}
	return a
}

// Due is the newest version acknowledged before t: what a read invoked
// at t must see at least.
func (a *Analysis) Due(t time.Duration) int64 {
	var v int64
	for _, p := range a.acks {
		if p.at >= t {
			break
		}
		if p.version > v {
			v = p.version
		}
	}
	return v
}

// NewerSince is when the first write newer than v was acknowledged
// (Never if none was).
func (a *Analysis) NewerSince(v int64) time.Duration {
	for _, p := range a.acks {
		if p.version > v {
			return p.at
		}
	}
	return Never
}

// Behind is how far a read of version v invoked at t was behind what had
// been acknowledged: versions, and for how long a newer version had been
// acknowledged; zero when it was not behind.
func (a *Analysis) Behind(v int64, t time.Duration) (int64, time.Duration) {
	due := a.Due(t)
	if v >= due {
		return 0, 0
	}
	return due - v, t - a.NewerSince(v)
}

// ReadyAt is the status of inst's /readyz as last answered before t (0
// when it had not answered yet or did not answer).
func (a *Analysis) ReadyAt(inst int, t time.Duration) int {
	polls := a.ready[inst]
	i := sort.Search(len(polls), func(i int) bool { return polls[i].Done > t })
	if i == 0 {
		return 0
	}
	return polls[i-1].Status
}

// ReadyAfter is the status of the first /readyz poll of inst sent at or
// after t (0 when there was none or it did not answer).
func (a *Analysis) ReadyAfter(inst int, t time.Duration) int {
	polls := a.ready[inst]
	// Polls are sequential, so sorted by when they were sent too.
	i := sort.Search(len(polls), func(i int) bool { return polls[i].Sent >= t })
	if i == len(polls) {
		return 0
	}
	return polls[i].Status
}

// hasLeaderAt says whether, by the status polls answered up to t, some
// member reported itself etcd's leader in its latest answer.
func hasLeaderAt(latest []*StatusPoll) bool {
	for _, p := range latest {
		if p != nil && p.OK && p.Status.IsLeader() {
			return true
		}
	}
	return false
}

// leaderSince is the start of the last stretch of [heal, until]
// throughout which etcd had a leader, as the status polls saw it: heal
// itself if it had one throughout, else the poll that saw one again (Never
// if it had none at until). After a heal every member is reachable from
// both instances again, so this is when etcd reachable from either
// instance reports a leader again.
func (a *Analysis) leaderSince(heal, until time.Duration) time.Duration {
	latest := make([]*StatusPoll, len(Members))
	i := 0
	for ; i < len(a.H.Statuses) && a.H.Statuses[i].Done <= heal; i++ {
		latest[a.H.Statuses[i].Member] = &a.H.Statuses[i]
	}
	since := Never
	if hasLeaderAt(latest) {
		since = heal
	}
	for ; i < len(a.H.Statuses) && a.H.Statuses[i].Done <= until; i++ {
		p := &a.H.Statuses[i]
		latest[p.Member] = p
		if !hasLeaderAt(latest) {
			since = Never
		} else if since == Never {
			since = p.Done
		}
	}
	return since
}

// LeaderAgain is when etcd had a leader again for instance inst after
// episode ep's heal (see leaderSince).
func (a *Analysis) LeaderAgain(ep, inst int) time.Duration { return a.leaderAgain[ep][inst] }

// InFault says whether the request [sent, done] to inst overlapped a
// fault for inst: from an episode's start until inst converged after its
// heal (the episode's end, if it never did). A request in flight when a
// fault begins is affected by it as much as one sent during it.
func (a *Analysis) InFault(inst int, sent, done time.Duration) bool {
	for _, ep := range a.Episodes {
		until := ep.Converged[inst]
		if until == Never {
			until = ep.End
		}
		if done >= ep.Start && sent <= until {
			return true
		}
	}
	return false
}

// Episode is the index of the episode t falls in, from start to end; -1
// if none.
func (a *Analysis) Episode(t time.Duration) int {
	for i, ep := range a.Episodes {
		if t >= ep.Start && t <= ep.End {
			return i
		}
	}
	return -1
}
