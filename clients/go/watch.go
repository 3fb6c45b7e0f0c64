package ringd

import (
	"context"
	"errors"
	"time"

	"github.com/ringd/ringd/clients/go/placement"
)

// failure is why one watch attempt ended.
type failure struct {
	// unsupported: the stream cannot be used through this server or a
	// proxy in front of it (the route is missing, refused, or delivers
	// nothing), so WatchAuto long-polls instead.
	unsupported bool
	// server is the server to move behind the next one, "" for none.
	server string
	err    error
	// retryAfter is the wait a 503 or 429 asked for with Retry-After,
	// when hasRetryAfter: the next attempt waits at least about that
	// long (backoff.afterRefusal).
	retryAfter    time.Duration
	hasRetryAfter bool
}

// watcher is the goroutine that follows the ring.
type watcher struct {
	c       *Client
	backoff backoff
	// rejected is the newest version refused and its stated fingerprint.
	// Watching resumes after it: fetching it again would only fail again
	// (a tampered copy, or rules this client does not share), so the
	// client waits for the next version instead.
	rejected    uint64
	rejectedFP  string
	useStream   bool
	streamAgain time.Time
}

func (w *watcher) run(ctx context.Context) {
	c := w.c
	w.useStream = c.s.mode != WatchLongPoll
	for ctx.Err() == nil {
		if !w.useStream && c.s.mode == WatchAuto && !w.streamAgain.IsZero() && time.Now().After(w.streamAgain) {
			w.useStream, w.streamAgain = true, time.Time{}
		}
		var f *failure
		if w.useStream {
			f = w.stream(ctx)
		} else {
			f = w.longPoll(ctx)
		}
		if f == nil || ctx.Err() != nil {
			continue
		}
		if f.unsupported && w.useStream && c.s.mode == WatchAuto {
			// Only a stream falls back; a refused long-poll backs off.
			w.useStream, w.streamAgain = false, time.Now().Add(c.s.sseRetry)
			w.setError(f.err)
			continue
		}
		if f.server != "" {
			c.eps.demote(f.server)
		}
		c.update(func(s *Status) {
			s.Transport, s.Server = Connecting, ""
			s.LastError, s.LastErrorAt = f.err, time.Now()
			s.Reconnects++
		})
		c.notify(Event{Kind: EventDisconnected, Server: f.server, Err: f.err})
		var wait time.Duration
		if f.hasRetryAfter {
			wait = w.backoff.afterRefusal(f.retryAfter)
		} else {
			wait = w.backoff.next()
		}
		if !sleep(ctx, wait) {
			return
		}
	}
}

func (w *watcher) setError(err error) {
	w.c.update(func(s *Status) { s.LastError, s.LastErrorAt = err, time.Now() })
}

// held is the version routed on, 0 for none.
func (w *watcher) held() uint64 {
	if v := w.c.Current(); v != nil {
		return v.Version()
	}
	return 0
}

// resumeAfter is where to resume: after the version held, or after a
// newer one that was refused.
func (w *watcher) resumeAfter() uint64 { return max(w.held(), w.rejected) }

func (w *watcher) connected(t Transport, server string) {
	c := w.c
	var changed bool
	c.update(func(s *Status) {
		changed = s.Transport != t || s.Server != server
		s.Transport, s.Server = t, server
	})
	if changed {
		c.notify(Event{Kind: EventConnected, Server: server, Transport: t})
	}
}

// refused turns a failed request into a failure, noting a deleted ring.
// A 503 or 429 with a Retry-After (a server at its --max-watchers) asks
// the next attempt to wait (backoff.afterRefusal). It names no server to
// demote: after a 503, endpoints.open has already tried every other
// server within the attempt (a 429 is not tried elsewhere, as for any
// request), and the next attempt starts again from the preferred one.
func (w *watcher) refused(err error) *failure {
	var api *APIError
	if errors.As(err, &api) {
		switch {
		case api.Slug() == "ring-not-found":
			if w.held() > 0 {
				w.markDeleted()
			}
		case api.Status == 503 || api.Status == 429:
			if d, ok := api.RetryAfter(); ok {
				return &failure{err: err, retryAfter: d, hasRetryAfter: true}
			}
		case api.Status == 404 || api.Status == 405 || api.Status == 406 || api.Status == 501:
			return &failure{unsupported: true, err: err}
		}
	}
	return &failure{err: err}
}

func (w *watcher) markDeleted() {
	var newly bool
	w.c.update(func(s *Status) { newly, s.Deleted = !s.Deleted, true })
	if newly {
		w.c.notify(Event{Kind: EventDeleted, Version: w.held()})
	}
}

// reject records a refused version; the view held stays.
func (w *watcher) reject(version uint64, stated string, err error) {
	if stated != "" {
		if w.rejected == version && w.rejectedFP == stated {
			return
		}
		if w.rejected <= version {
			w.rejected, w.rejectedFP = version, stated
		}
	}
	err = &SnapshotError{Ring: w.c.ring, Version: version, Err: err}
	w.c.update(func(s *Status) {
		s.Refused++
		s.LastError, s.LastErrorAt = err, time.Now()
	})
	w.c.notify(Event{Kind: EventRefused, Version: version, Err: err})
}

// applyJSON decodes a snapshot body and applies it.
func (w *watcher) applyJSON(ctx context.Context, body []byte, what string, reset bool, id uint64) {
	s, err := placement.ParseSnapshot(body)
	if err != nil {
		w.reject(id, "", &MalformedError{What: what, Err: err})
		return
	}
	w.apply(ctx, s, reset)
}

// apply verifies s and, if it holds, routes on it from now on.
func (w *watcher) apply(ctx context.Context, s *placement.Snapshot, reset bool) {
	c := w.c
	held := c.Current()
	if held != nil {
		same := s.Version == held.Version() && s.Fingerprint == held.Fingerprint()
		if same || (!reset && s.Version <= held.Version()) {
			return
		}
	}
	if s.Ring != "" && s.Ring != c.ring {
		w.reject(s.Version, s.Fingerprint, &MalformedError{What: "snapshot", Err: errors.New("it names ring " + s.Ring)})
		return
	}
	start := time.Now()
	p, built, err := w.verified(ctx, held, s)
	if err != nil {
		var api *APIError
		var down *UnreachableError
		if errors.As(err, &down) || (errors.As(err, &api) && (api.Type == "" || api.Status >= 500)) || ctx.Err() != nil {
			// A table download that did not get through says nothing about
			// the version: keep the one held and take it again as it comes.
			w.setError(err)
			return
		}
		w.reject(s.Version, s.Fingerprint, err)
		return
	}
	if reset || w.rejected <= s.Version {
		// Past the refused version, or on a history without it.
		w.rejected, w.rejectedFP = 0, ""
	}
	view := &View{Snapshot: s, Placement: p}
	prev := c.swap(view)
	var from uint64
	if prev != nil {
		from = prev.Version()
	}
	c.update(func(st *Status) {
		st.Version, st.Fingerprint, st.Deleted = s.Version, s.Fingerprint, false
		st.Applied++
		switch built {
		case builtMoves:
			st.TableMovesApplied++
		case builtDownload:
			st.TableDownloads++
		}
		// An ack of a higher version belongs to a deleted ring's history.
		if st.Acked > s.Version {
			st.Acked = 0
		}
	})
	select {
	case c.acks <- struct{}{}:
	default: // an ack is already due; it will send the newest version
	}
	c.notify(Event{Kind: EventApplied, Version: s.Version, From: from, Reset: reset, Took: time.Since(start)})
}
