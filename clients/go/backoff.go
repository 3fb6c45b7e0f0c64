package ringd

import (
	"math/rand/v2"
	"time"
)

// backoff doubles from min to max; each wait is drawn uniformly from the
// upper half of the current step ("equal jitter"): never shorter than
// half the step, so a flapping server is not hammered, yet spread out so
// that clients that lost the same server do not return together.
type backoff struct {
	min, max, step time.Duration
}

func newBackoff(min, max time.Duration) backoff { return backoff{min: min, max: max, step: min} }

// reset goes back to the shortest wait, after something worked.
func (b *backoff) reset() { b.step = b.min }

// next is the next wait.
func (b *backoff) next() time.Duration {
	step := b.step
	b.step = min(2*b.step, b.max)
	return step/2 + jitter(step/2)
}

// afterRefusal is the next wait after a watch or long-poll attempt was
// refused with 503 or 429 and a Retry-After of retryAfter (every server
// tried: endpoints.open moves on to the next server after a 503 within
// the attempt). The backoff advances as after any failure; the wait is
// retryAfterWait of its next wait.
func (b *backoff) afterRefusal(retryAfter time.Duration) time.Duration {
	return retryAfterWait(b.next(), retryAfter, b.max, jitter(time.Second))
}

// retryAfterWait is the rule every ringd client follows when a watch or
// long-poll is answered 503 or 429 with a Retry-After in delta-seconds:
// wait
//
//	max(next, min(retryAfter, maxWait) + jitter)
//
// where next is the backoff's next wait, maxWait the backoff's maximum
// and jitter uniform in [0, 1 s). So a refused client never comes back
// sooner than its backoff would, nor sooner than the server asked; the
// ask is cut to the maximum, so a server cannot park a client for long;
// and the jitter spreads the clients that were told the same whole
// second (ringd draws it from 1..=10 s for a refusal at capacity) over
// that second instead of bringing them back in one instant.
func retryAfterWait(next, retryAfter, maxWait, jitter time.Duration) time.Duration {
	return max(next, min(retryAfter, maxWait)+jitter)
}

// jitter is a uniform duration in [0, d).
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(d)))
}

// sleep waits d or until ctx is done; false if ctx is done.
func sleep(ctx interface{ Done() <-chan struct{} }, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
