package ringd

import (
	"context"
	"errors"
	"time"
)

// leaseInput is the body of PUT …/nodes/{node}/lease: the record without
// its id (the path names it), and state only when set, so a ring whose
// policy decides a joining node's state gets to decide it.
type leaseInput struct {
	Address string            `json:"address,omitempty"`
	Weight  int               `json:"weight,omitempty"`
	Zone    string            `json:"zone,omitempty"`
	HashKey string            `json:"hash_key,omitempty"`
	State   string            `json:"state,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	TTL     string            `json:"ttl"`
}

func leaseBody(n NodeRecord, ttl time.Duration) leaseInput {
	return leaseInput{
		Address: n.Address, Weight: n.Weight, Zone: n.Zone, HashKey: n.HashKey,
		State: n.State, Labels: n.Labels, TTL: formatWait(ttl),
	}
}

// leaseView is what registering, renewing and releasing answer.
type leaseView struct {
	LeaseID  string    `json:"lease_id"`
	Deadline time.Time `json:"deadline"`
	Version  uint64    `json:"version"`
}

// memberTask is the goroutine behind a Member.
type memberTask struct {
	m       *Member
	eps     *endpoints
	path    string // /v1/rings/{ring}/nodes/{node}/lease
	body    leaseInput
	ttl     time.Duration
	backoff backoff
}

// held is a lease the task holds; expires is when it expires at the
// latest on this machine's clock: the TTL from when the request that set
// it was sent, no later than the server's own deadline.
type held struct {
	id      string
	expires time.Time
}

// outcome is what a failed request means for the member.
type outcome int

const (
	transient outcome = iota // try again after a backoff
	leaseGone                // register again at once
	fatal                    // asking again cannot change it: stop
)

func classify(err error) outcome {
	var api *APIError
	if !errors.As(err, &api) {
		return transient
	}
	switch {
	case api.Status == 404 && api.Slug() == "lease-not-found":
		return leaseGone
	case api.Status == 409:
		// On a renewal, the id names another node's lease: a new
		// registration gets this node its own.
		return leaseGone
	case api.Status == 408 || api.Status == 425 || api.Status == 429:
		return transient
	case api.Status >= 400 && api.Status < 500:
		return fatal
	}
	return transient
}

// run registers and renews until ctx ends or Leave, then releases; or
// until a fatal refusal. It returns the release's outcome.
func (t *memberTask) run(ctx context.Context) error {
	m := t.m
	// Requests must outlive ctx, so that the release still goes out when
	// the caller's context is what ended.
	reqCtx := context.WithoutCancel(ctx)
	var h *held
	for !t.stopping(ctx) {
		var wait time.Duration
		if h == nil {
			nh, err := t.call(reqCtx, "PUT", t.path, true)
			switch {
			case err == nil:
				h, wait = nh, t.renewalWait()
			case classify(err) == fatal:
				m.update(func(s *MemberStatus) { s.State, s.LastError = MemberFailed, err })
				return nil
			default:
				m.update(func(s *MemberStatus) { s.LastError = err })
				wait = t.backoff.next()
			}
		} else {
			nh, err := t.call(reqCtx, "POST", t.path+"/"+h.id+"/renew", false)
			switch c := classify(err); {
			case err == nil:
				h, wait = nh, t.renewalWait()
			case c == fatal:
				m.update(func(s *MemberStatus) { s.State, s.LastError = MemberFailed, err })
				return nil
			case c == leaseGone:
				h = nil
				t.lose(err)
			case time.Now().After(h.expires):
				h, wait = nil, t.backoff.next()
				t.lose(err)
			default:
				m.update(func(s *MemberStatus) { s.LastError = err })
				// Retry soon enough to renew before the deadline.
				wait = min(t.backoff.next(), time.Until(h.expires)/2)
			}
		}
		if wait > 0 && !t.sleep(ctx, wait) {
			break
		}
	}
	var err error
	if h != nil {
		_, err = t.call(reqCtx, "DELETE", t.path+"/"+h.id, false)
		if classify(err) == leaseGone {
			err = nil // already gone: nothing is left to release
		}
	}
	m.update(func(s *MemberStatus) { s.State = MemberLeft })
	return err
}

func (t *memberTask) stopping(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	case <-t.m.stop:
		return true
	default:
		return false
	}
}

// sleep waits d; false if told to stop meanwhile.
func (t *memberTask) sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return !t.stopping(ctx)
	case <-ctx.Done():
	case <-t.m.stop:
	}
	return false
}

// renewalWait is about a third of the TTL, drawn from [1/4, 5/12) of it
// so members started together spread their renewals.
func (t *memberTask) renewalWait() time.Duration {
	third := t.ttl / 3
	return third*3/4 + jitter(third/2)
}

func (t *memberTask) lose(err error) {
	t.m.update(func(s *MemberStatus) {
		s.State, s.LastError = MemberLost, err
		s.Losses++
	})
}

// call sends one lease request and records the answer. On a transport
// failure it demotes the server tried first, so the next attempt starts
// elsewhere even after a timeout (which a write does not fail over on).
func (t *memberTask) call(ctx context.Context, method, path string, register bool) (*held, error) {
	first := t.eps.first()
	sent := time.Now()
	var body any
	if method == "PUT" {
		body = t.body
	}
	var v leaseView
	server, err := t.eps.sendJSON(ctx, method, path, body, &v, 0)
	if err != nil {
		if errors.Is(err, ErrUnreachable) {
			t.eps.demote(first)
		}
		return nil, err
	}
	if len(v.LeaseID) != 32 && method != "DELETE" {
		return nil, &MalformedError{What: server + path, Err: errors.New("no 32-digit lease_id")}
	}
	t.backoff.reset()
	h := &held{id: v.LeaseID, expires: sent.Add(t.ttl)}
	t.m.update(func(s *MemberStatus) {
		s.Deadline, s.Server = v.Deadline, server
		if method == "DELETE" {
			return
		}
		s.LeaseID, s.LastError = v.LeaseID, nil
		s.Heartbeats++
		if register {
			s.State, s.Version = MemberRegistered, v.Version
		} else {
			s.State = MemberRenewing
		}
	})
	return h, nil
}
