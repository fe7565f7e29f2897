// Package gcpace collects garbage between rounds of latency-critical work
// instead of inside them.
//
// A scheduler alternates rounds (observe, decide, apply) with idle waits.
// Go's collector starts a cycle when the heap crosses a trigger, wherever
// the program is; at 100,000 jobs a cycle marks a few hundred MB for tens
// of milliseconds, and a decision that overlaps it runs two to four times
// slower (mark assists, write barriers, one processor of two taken by the
// mark worker). A Pacer, asked at each idle point, collects there when
// the heap would probably cross the trigger before the next idle point:
// the cycle the runtime was about to run anyway, run a little earlier,
// where nobody waits for it. It never collects when the heap is far from
// the trigger, so its cost is at most one early cycle per natural one.
package gcpace

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// minTrigger is the lowest point between the last marked heap and the
// next goal at which Go's pacer starts a cycle (runtime/mgcpacer.go:
// minTriggerRatioNum/triggerRatioDen = 45/64 ≈ 0.70).
const minTrigger = 0.70

// window is how many past intervals the expected allocation is the
// maximum of: long enough to remember a periodic full reconcile, short
// enough that one cold start does not force a collection every round.
const window = 8

// Config sets a Pacer's margin; the zero value takes the defaults.
type Config struct {
	// Margin multiplies the most bytes allocated between two idle points
	// in the recent window: the allocation expected before the next one.
	// Default 2.
	Margin float64
	// Off leaves every collection to the runtime: Idle does nothing.
	Off bool
	// Background runs each collection on a goroutine of its own, so Idle
	// returns at once and a round that starts before the collection ends
	// overlaps it, as it would a cycle the runtime started; at most one
	// runs at a time. Without it Idle returns when the collection is done.
	Background bool
	// Collected, if set, is called after each collection with its wall
	// time, on the goroutine that collected.
	Collected func(time.Duration)
}

// Pacer decides at idle points whether to collect. Idle is not safe for
// concurrent use (one loop owns it); Collections and Spent are.
type Pacer struct {
	cfg       Config
	samples   []metrics.Sample
	lastAlloc uint64
	started   bool
	recent    [window]uint64
	next      int
	running   atomic.Bool
	count     atomic.Int64
	spent     atomic.Int64 // ns
}

// Collections is how many collections Idle has run (finished ones).
func (p *Pacer) Collections() int { return int(p.count.Load()) }

// Spent is the wall time of those collections.
func (p *Pacer) Spent() time.Duration { return time.Duration(p.spent.Load()) }

// Reset forgets the collections counted so far.
func (p *Pacer) Reset() { p.count.Store(0); p.spent.Store(0) }

// New returns a Pacer; call Idle at every idle point of the loop.
func New(cfg Config) *Pacer {
	if cfg.Margin <= 0 {
		cfg.Margin = 2
	}
	return &Pacer{cfg: cfg, samples: []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}}
}

// heap is what Idle reads of the runtime.
type heap struct{ allocs, goal, marked, now uint64 }

func (p *Pacer) read() heap {
	metrics.Read(p.samples)
	v := func(i int) uint64 {
		if p.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return p.samples[i].Value.Uint64()
	}
	return heap{allocs: v(0), goal: v(1), marked: v(2), now: v(3)}
}

// Idle records the allocation since the last call and collects now when
// the heap plus the expected allocation would reach the trigger. It
// reports whether it collected (with Background: started a collection).
func (p *Pacer) Idle() bool {
	if p.cfg.Off {
		return false
	}
	h := p.read()
	if p.started {
		p.recent[p.next%window] = h.allocs - p.lastAlloc
		p.next++
	}
	p.started = true
	p.lastAlloc = h.allocs
	if p.running.Load() || !due(h, p.expected(), p.cfg.Margin) {
		return false
	}
	p.running.Store(true)
	if p.cfg.Background {
		go p.collect()
		return true
	}
	p.collect()
	p.lastAlloc = p.read().allocs // the collection's own allocation is not the loop's
	return true
}

// collect runs one collection and counts it.
func (p *Pacer) collect() {
	t0 := time.Now()
	runtime.GC()
	d := time.Since(t0)
	p.spent.Add(int64(d))
	p.count.Add(1)
	if p.cfg.Collected != nil {
		p.cfg.Collected(d)
	}
	p.running.Store(false)
}

// expected is the most bytes allocated between two idle points in the
// window.
func (p *Pacer) expected() uint64 {
	var m uint64
	for _, b := range p.recent {
		m = max(m, b)
	}
	return m
}

// due says whether a heap at h.now, growing by margin × next bytes,
// reaches the earliest trigger of the cycle after the one that marked
// h.marked. Unknown figures (a runtime without these metrics) say no.
func due(h heap, next uint64, margin float64) bool {
	if h.goal == 0 || h.goal <= h.marked {
		return false
	}
	trigger := float64(h.marked) + minTrigger*float64(h.goal-h.marked)
	return float64(h.now)+margin*float64(next) >= trigger
}
