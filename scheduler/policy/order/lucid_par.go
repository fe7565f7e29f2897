package order

import (
	"runtime"

	"github.com/caravan-dl/caravan/internal/split"
)

// lucidParMin is the fewest keys modelKeys splits over workers: below a
// few thousand the hand-off costs more than the pass (a variable for
// tests).
var lucidParMin = 8192

// lucidWorkers is how many workers modelKeys uses (a variable for tests).
var lucidWorkers = func() int { return runtime.GOMAXPROCS(0) }

// lucidWorkersFor is how many workers a pass over n keys uses.
func lucidWorkersFor(n int) int {
	if w := lucidWorkers(); w >= 1 && n >= lucidParMin {
		return w
	}
	return 1
}

// lucidPar is modelKeys' per-worker scratch.
type lucidPar struct {
	deferred [][]int32 // per worker: keys whose slot must be refilled
}

// retarget points slot i at entry p (nil: none), counting the entries
// more than one slot holds.
func (l *Lucid) retarget(i int, p *lucidPred) {
	h := &l.hot[i]
	if old := h.p; old != nil {
		if old.refs == 2 {
			l.shared--
		}
		old.refs--
	}
	h.p, h.dropped = p, false
	if p != nil {
		p.refs++
		p.slot = int32(i)
		if p.refs == 2 {
			l.shared++
		}
	}
}

// drop marks entry p dropped (reported finished, or pruned).
func (l *Lucid) drop(p *lucidPred) {
	p.gone = true
	l.dropped = append(l.dropped, p)
}

// markDropped marks the slots whose entries were dropped since the last
// tracked call, for modelKeys to refill. full: an entry was held by more
// than one slot, or not by the one that last took it, so every slot's
// entry must be asked. Asking them all read ~122,000 entries a decision
// at 10k × 100k, elsewhere in memory: ~0.9 ms of a decision's 6.
func (l *Lucid) markDropped() (full bool) {
	for _, p := range l.dropped {
		switch {
		case p.refs == 0:
		case p.refs == 1 && int(p.slot) < len(l.hot) && l.hot[p.slot].p == p:
			l.hot[p.slot].dropped = true
		default:
			full = true
		}
	}
	clear(l.dropped)
	l.dropped = l.dropped[:0]
	return full
}

// lucidSplit runs f over w fixed ranges of [0, n) on w goroutines (the
// caller's included) and waits for them all.
func lucidSplit(n, w int, f func(r, lo, hi int)) { split.Run(n, w, w, f) }

// modelKeysPar is modelKeys on w workers over fixed ranges of ks. Per
// key in list order, a slot that needs one is refilled (which may create
// or share an entry: the map and the entries' reference counts), then
// the entry is brought to the model's version and the job sized.
// Refills never read what bringing writes (an entry's version and
// fitted terms: a new entry is made at the current version), so they are
// done first, serially in list order, and the rest after them. Bringing
// writes the entry, so it runs in parallel only while no entry is held
// by two slots (else the first listed must set it); each worker writes
// only its own keys, their slots and their entries.
func (l *Lucid) modelKeysPar(ks []keyed, w int) {
	par := &l.par
	if len(par.deferred) < w {
		par.deferred = make([][]int32, w)
	}
	// which slots must be refilled
	full := l.markDropped()
	lucidSplit(len(ks), w, func(r, lo, hi int) {
		d := par.deferred[r][:0]
		for x := lo; x < hi; x++ {
			k := &ks[x]
			i := int(k.at) - 1
			h := &l.hot[i]
			if p := h.p; int(k.queue) != i || p == nil || h.dropped || full && p.gone {
				d = append(d, int32(x))
			}
		}
		par.deferred[r] = d
	})
	for _, d := range par.deferred[:w] { // ranges in order: list order
		for _, x := range d {
			k := &ks[x]
			i := int(k.at) - 1
			l.fill(i, k.job)
			l.featuresAt(i, k.job)
		}
	}
	if l.shared > 0 {
		l.sizeKeys(ks)
		return
	}
	lucidSplit(len(ks), w, func(_, lo, hi int) { l.sizeKeys(ks[lo:hi]) })
}

// sizeKeys brings each key's entry to the model's version and sets a
// main-phase job's size, from its slot (already refilled). In a call
// without reasons a job that is never a victim is keyed first, by its
// position, and its entry is not brought: only while no entry is held by
// two slots, as the first listed of two must bring theirs.
func (l *Lucid) sizeKeys(ks []keyed) {
	loose := l.kk.loose && l.shared == 0
	for x := range ks {
		k := &ks[x]
		i := int(k.at) - 1
		k.queue = 0
		switch {
		case k.k[0] != 2:
			l.bring(i)
		case loose && l.hot[i].fixed:
			k.k = [3]float64{-1, float64(k.at), 0}
		default:
			if l.kk.loose && l.hot[i].fixed { // its mover held (hold): take its service
				l.served(i, l.executed(k.job))
			}
			k.k[1] = l.slotSize(i)
		}
	}
}
