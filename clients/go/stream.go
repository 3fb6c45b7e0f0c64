package ringd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// stream opens the ring's watch stream after the version held and
// applies its events until it breaks; it always ends in a failure (nil
// only when ctx is done).
func (w *watcher) stream(ctx context.Context) *failure {
	c := w.c
	header := http.Header{"Accept": {"text/event-stream"}}
	if after := w.resumeAfter(); after > 0 {
		// Last-Event-ID, as an EventSource resumes: the server replays
		// every version after it.
		header.Set("Last-Event-ID", strconv.FormatUint(after, 10))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The idle timer cuts a stream that sends nothing, not even the
	// keep-alive, for idleTimeout; each chunk read pushes it back.
	var idled atomic.Bool
	idle := time.AfterFunc(c.s.idleTimeout, func() { idled.Store(true); cancel() })
	defer idle.Stop()
	resp, server, err := c.eps.open(ctx, "GET", "/v1/rings/"+c.ring+"/watch", nil, header)
	if err != nil {
		if idled.Load() {
			return &failure{server: c.eps.first(), err: fmt.Errorf("no answer to the watch within %v", c.s.idleTimeout)}
		}
		if ctx.Err() != nil {
			return nil
		}
		return w.refused(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return &failure{unsupported: true, server: server, err: fmt.Errorf("%s answered the watch with %q, not an event stream", server, ct)}
	}
	w.connected(SSE, server)
	var dec sseDecoder
	var events []sseEvent
	buf := make([]byte, 64<<10)
	gotAny := false
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			idle.Reset(c.s.idleTimeout)
			var derr error
			events, derr = dec.feed(buf[:n], events[:0])
			for _, ev := range events {
				if !gotAny {
					gotAny = true
					w.backoff.reset()
				}
				w.onEvent(ctx, ev)
			}
			if derr != nil {
				return &failure{server: server, err: &MalformedError{What: server + " watch stream", Err: derr}}
			}
		}
		if rerr == nil {
			continue
		}
		switch {
		case idled.Load() && !gotAny:
			return &failure{unsupported: true, server: server, err: fmt.Errorf("%s sent no event within %v (a buffering proxy?)", server, c.s.idleTimeout)}
		case idled.Load():
			return &failure{server: server, err: fmt.Errorf("%s sent nothing for %v", server, c.s.idleTimeout)}
		case errors.Is(rerr, context.Canceled) && ctx.Err() != nil:
			return nil
		}
		return &failure{server: server, err: fmt.Errorf("stream from %s ended: %w", server, rerr)}
	}
}

func (w *watcher) onEvent(ctx context.Context, ev sseEvent) {
	switch ev.event {
	case "snapshot", "reset":
		id, _ := strconv.ParseUint(ev.id, 10, 64)
		w.applyJSON(ctx, []byte(ev.data), ev.event+" event", ev.event == "reset", id)
	case "deleted":
		w.markDeleted()
	case "keepalive":
		w.checkKeepalive(ctx, ev.data)
	}
	// Other types (health, rollout, stale, and any added later) are not
	// about versions: ignored, as the API asks of clients.
}

// checkKeepalive compares the newest version a keep-alive names with the
// one held: the same number with another fingerprint, or a lower number,
// means the ring was deleted and recreated while the client was away, so
// the current snapshot replaces what the client holds.
func (w *watcher) checkKeepalive(ctx context.Context, data string) {
	var k struct {
		Version     *uint64 `json:"version"`
		Fingerprint *string `json:"fingerprint"`
	}
	held := w.c.Current()
	if json.Unmarshal([]byte(data), &k) != nil || k.Version == nil || k.Fingerprint == nil || held == nil {
		return
	}
	v, fp := *k.Version, *k.Fingerprint
	diverged := (v == held.Version() && fp != held.Fingerprint()) || v < held.Version()
	if !diverged || (w.rejected == v && w.rejectedFP == fp) {
		return
	}
	path := "/v1/rings/" + w.c.ring + "/snapshot"
	a, err := w.c.eps.call(ctx, "GET", path, nil, nil, 0)
	if err != nil {
		w.setError(err)
		return
	}
	w.applyJSON(ctx, a.body, a.server+path, true, 0)
}
