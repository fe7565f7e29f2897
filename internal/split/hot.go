package split

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A pass's helper goroutine is started when the pass begins, and on a
// host whose idle cores sleep (a VM's halted vCPU) the OS takes 0.1-0.5
// ms to run it: a 2-core host ran two 300 µs parts in 420-580 µs, the
// helper taking the second part only when it woke. A decision at
// 100,000 jobs makes dozens of passes of 0.2-2 ms, so most of them ran
// nearly serially. Hold keeps helpers running for a while instead
// (around a decision): they spin, waiting for the next pass, and take
// its parts within a microsecond (the same two parts: 304-330 µs;
// BenchmarkPass). They park after spinFor without a part, and when the
// last hold is released, so they cost a core only while passes come
// close together.

// hot is the process' one set of spinning helpers.
var hot struct {
	holds atomic.Int32
	// cur is the pass the helpers take parts of (nil: none); one pass at
	// a time, a concurrent one runs as before
	cur  atomic.Pointer[pass]
	once sync.Once
	// wake has one slot per helper: a hold beginning sends to it
	wake chan struct{}
	// kick wakes helpers parked inside a hold (parked counts them): a
	// pass posted sends to it
	kick   chan struct{}
	parked atomic.Int32
	n      int
	// helped counts the parts helpers ran (for tests)
	helped atomic.Int64
}

// pass is one Run shared with spinning helpers.
type pass struct {
	n, k int
	fn   func(part, lo, hi int)
	next atomic.Int32
	left atomic.Int32 // parts not done
}

// Hold keeps GOMAXPROCS-1 helpers (as many as at the first Hold)
// spinning until release is called, so the passes Run makes meanwhile
// are taken up at once. Holds nest and may overlap (the helpers serve
// while any is held); with one processor it does nothing. A helper
// spins up to spinFor after each part: hold around work that runs many
// passes close together (a decision at scale), not around waiting.
func Hold() (release func()) {
	if Procs() < 2 {
		return func() {}
	}
	hot.once.Do(startHelpers)
	if hot.holds.Add(1) == 1 {
		for range hot.n {
			select {
			case hot.wake <- struct{}{}:
			default: // a token is already waiting
			}
		}
	}
	var once sync.Once
	return func() { once.Do(func() { hot.holds.Add(-1) }) }
}

// startHelpers starts the helpers, parked.
func startHelpers() {
	hot.n = Procs() - 1
	hot.wake = make(chan struct{}, hot.n)
	hot.kick = make(chan struct{}, hot.n)
	for range hot.n {
		go helper()
	}
}

// spinFor is how long a held helper spins without a part before it
// parks until the next pass: the passes of a decision's ordering and
// rank pass come microseconds apart, its walk runs for milliseconds
// alone, and a spinning helper would take a core from anything else
// that could run.
const spinFor = 500 * time.Microsecond

// helper parks until a hold begins, then takes parts of any pass shared
// until no hold is left.
func helper() {
	for range hot.wake {
		serve()
	}
}

// serve takes parts of the passes shared while any hold is held,
// spinning between them, parked after spinFor without one.
func serve() {
	last := time.Now()
	for hot.holds.Load() > 0 {
		if p := hot.cur.Load(); p != nil && int(p.next.Load()) < p.k {
			hot.helped.Add(int64(p.work()))
			last = time.Now()
			continue
		}
		if time.Since(last) < spinFor {
			idle()
			continue
		}
		// announced before the check: a pass posted after the check sees
		// the helper parked and kicks it (runHot)
		hot.parked.Add(1)
		if hot.cur.Load() == nil && hot.holds.Load() > 0 {
			<-hot.kick
		}
		hot.parked.Add(-1)
		last = time.Now()
	}
}

// idle waits a moment without giving up the core, then lets the
// runtime run anything else that waits for it (a GC worker, say).
func idle() {
	for range 64 {
		if hot.cur.Load() != nil {
			return
		}
	}
	runtime.Gosched()
}

// work takes the pass' parts one at a time until none is left, and
// returns how many it ran.
func (p *pass) work() (did int) {
	for {
		i := int(p.next.Add(1)) - 1
		if i >= p.k {
			return did
		}
		if i == p.k-1 { // every part is taken: free the helpers for another pass
			hot.cur.CompareAndSwap(p, nil)
		}
		lo, hi := Range(i, p.k, p.n)
		p.fn(i, lo, hi)
		p.left.Add(-1)
		did++
	}
}

// runHot runs a pass of k > 1 parts with the spinning helpers: false,
// having run nothing, where none is held, another pass has them, or
// they are more than the pass may use (goroutines, the caller's
// included).
func runHot(n, k, goroutines int, fn func(part, lo, hi int)) bool {
	if hot.holds.Load() == 0 || goroutines <= hot.n {
		return false
	}
	p := &pass{n: n, k: k, fn: fn}
	p.left.Store(int32(k))
	if !hot.cur.CompareAndSwap(nil, p) {
		return false
	}
	for range hot.parked.Load() {
		select {
		case hot.kick <- struct{}{}:
		default: // as many kicks wait as helpers
		}
	}
	p.work()
	hot.cur.CompareAndSwap(p, nil)
	// the helpers finish the parts they took; they are running, so the
	// wait is a part at most, spent spinning rather than parked (a parked
	// caller would wait for the OS to run it again)
	for p.left.Load() > 0 {
		runtime.Gosched()
	}
	return true
}
