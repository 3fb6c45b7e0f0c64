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
