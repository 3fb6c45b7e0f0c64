package ringd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ringd/ringd/clients/go/placement"
)

// maxGap is the most missing versions a long-poll fetches one by one, so
// observers see every version as on a stream; a larger gap is bridged by
// jumping to the newest (a reset).
const maxGap = 64

// formatWait writes d as the API's durations: 30s, 500ms.
func formatWait(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%dms", d/time.Millisecond)
}

// longPoll makes one long-poll; nil after a new version or an empty wait.
func (w *watcher) longPoll(ctx context.Context) *failure {
	c := w.c
	path := "/v1/rings/" + c.ring + "/snapshot"
	held := w.resumeAfter()
	if held > 0 {
		path += fmt.Sprintf("?after=%d&wait=%s", held, formatWait(c.s.longPollWait))
	}
	// The server may add up to 1/16 of the wait as jitter.
	limit := c.s.longPollWait + c.s.longPollWait/16 + c.s.requestTimeout
	a, err := c.eps.call(ctx, http.MethodGet, path, nil, nil, limit)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return w.refused(err)
	}
	w.connected(LongPoll, a.server)
	w.backoff.reset()
	if a.status == http.StatusNotModified {
		return nil
	}
	reset := a.header.Get("Ringd-Reset") == "true"
	s, err := placement.ParseSnapshot(a.body)
	if err != nil {
		w.reject(0, "", &MalformedError{What: a.server + path, Err: err})
		// Refused without a version to resume after: back off rather
		// than ask again at once.
		return &failure{server: a.server, err: err}
	}
	if held > 0 && !reset {
		if s.Version > held+1+maxGap {
			reset = true
		} else {
			for v := held + 1; v < s.Version; v++ {
				p := fmt.Sprintf("/v1/rings/%s/snapshots/%d", c.ring, v)
				b, err := c.eps.call(ctx, http.MethodGet, p, nil, nil, 0)
				var api *APIError
				if errors.As(err, &api) && (api.Status == 404 || api.Status == 410) {
					reset = true // pruned: bridge the gap
					break
				}
				if err != nil {
					return w.refused(err)
				}
				w.applyJSON(ctx, b.body, b.server+p, false, v)
			}
		}
	}
	w.apply(ctx, s, reset)
	return nil
}
