package ringd

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ackBody is the body of POST …/clients/{id}/ack. Kind is left out for a
// library, so acks stay readable by servers from before kinds existed
// (they refuse unknown fields).
type ackBody struct {
	Version     uint64     `json:"version"`
	Fingerprint string     `json:"fingerprint"`
	Kind        ClientKind `json:"kind,omitempty"`
}

// ackLoop acks each version once it is applied (only the newest if
// several arrive while an ack is in flight), and the current one again
// every ack interval so it does not expire under the server's
// --client-ttl.
func (c *Client) ackLoop(ctx context.Context) {
	path := fmt.Sprintf("/v1/rings/%s/clients/%s/ack", c.ring, c.clientID)
	// Beside the watch's connection, an ack's would stay open in a
	// keep-alive pool: acks close theirs once answered (see
	// endpoints.withoutKeepAlive for why).
	eps := c.eps.withoutKeepAlive()
	b := newBackoff(c.s.backoffMin, c.s.backoffMax)
	for {
		wait := c.s.ackInterval
		if v := c.Current(); v != nil {
			body := ackBody{Version: v.Version(), Fingerprint: v.Fingerprint()}
			if c.s.kind != KindLibrary {
				body.Kind = c.s.kind
			}
			_, err := eps.sendJSON(ctx, "POST", path, body, nil, 0)
			if ctx.Err() != nil {
				return
			}
			var api *APIError
			switch {
			case err == nil:
				b.reset()
				c.update(func(s *Status) {
					s.Acks++
					// Only while that version is still the one routed on: a
					// late answer must not mark a recreated ring as acked.
					if cur := c.Current(); cur != nil && cur.Version() == v.Version() && cur.Fingerprint() == v.Fingerprint() {
						s.Acked = v.Version()
					}
				})
			case errors.As(err, &api) && api.Status >= 400 && api.Status < 500:
				// The ring was deleted or recreated below this version: the
				// watch will bring what replaces it; wait for that.
				c.ackFailed(err)
			default:
				c.ackFailed(err)
				wait = b.next()
			}
			c.notify(Event{Kind: EventAcked, Version: v.Version(), Err: err})
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-c.acks: // a newer version cuts the wait short
		case <-t.C:
		}
		t.Stop()
	}
}

func (c *Client) ackFailed(err error) {
	c.update(func(s *Status) {
		s.AckFailures++
		s.LastError, s.LastErrorAt = err, time.Now()
	})
}
