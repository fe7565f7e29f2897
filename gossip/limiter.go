package gossip

import (
	"sync"
	"time"
)

// dutyLimiter keeps the fraction of time spent probing at or below share:
// after a probe that took d, the next may start only d·(1/share − 1)
// later.
type dutyLimiter struct {
	mu       sync.Mutex
	share    float64
	nextFree time.Time
}

func (l *dutyLimiter) allow(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !now.Before(l.nextFree)
}

// take reserves the limiter if free, returning false when busy.
func (l *dutyLimiter) take(now time.Time, maxDur time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Before(l.nextFree) {
		return false
	}
	// Hold it for the longest the probe may take until charge settles it.
	l.nextFree = now.Add(maxDur)
	return true
}

func (l *dutyLimiter) charge(end time.Time, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	idle := time.Duration(float64(d) * (1/l.share - 1))
	l.nextFree = end.Add(idle)
}
