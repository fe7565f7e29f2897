package order

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// rhoRanks is Fair's ranking of a tracked snapshot (Snapshot.JobGen),
// kept in rank order from one call to the next. ρ moves with Now for
// every job, so every call keys every job again; where calls are close
// together the last order is nearly this one's (sort_near.go). The
// general path keys the jobs by position and gathers the keys in the
// last order, a random read of a 40-byte key a job at 100,000 jobs, and
// ranks them with another; here what ρ takes of each job (rhoEnt) is
// kept in the last rank order itself, so keying, sorting by insertion
// and writing the ranking each read it in sequence. A job whose stamp
// moved leaves its place and is merged in anew.
//
// The order is sortKeyed's on Fair's keys exactly: −ρ, running before
// queued, Submit, ID, then position.
type rhoRanks struct {
	valid bool
	// by position: the stamp last read, whether it listed an active job
	// then, and whether its stamp moved in this call (its entry, if
	// any, is then gone: a byte a position is read at random from the
	// entries in rank order, where the stamps are eight)
	gen     []uint64
	active  []bool
	changed []bool
	// nActive counts the active jobs (ρ's N)
	nActive int
	// ents[:last] is the last ranking; this call appends its new jobs
	// after it. next is the buffer this call's ranking is written to.
	ents, next []rhoEnt
	last       int
	// items are this call's keys of the kept jobs (i: index in ents),
	// fitems the new jobs'; window and rad are scratch
	items, fitems, window, rad []nearItem
	parts                      []rhoPart
	counts                     []radixCounts
	out                        []policy.Ranked
	at, prev                   []int32
	// skip and backoff are nearSort's: calls left to sort in full after
	// an insertion ran out of moves, and the skip the next failure sets
	skip, backoff int
	// nearly counts the calls whose insertion kept within its budget
	// (tests)
	nearly int
	// lazy: leave the ranking's jobs to the caller (OrderIndexed)
	lazy bool
}

// rhoEnt is what ρ takes of one active job.
type rhoEnt struct {
	pos int32
	// state is stateTie's: 0 running, 1 queued
	state            int32
	submit, share, x float64
	// since is the job's Accrual.Since while it accrues (x is then its
	// Executed as of then), +Inf otherwise
	since float64
}

// rhoPart is one part's state in a split pass.
type rhoPart struct {
	fresh []rhoEnt
	delta int // active jobs gained
	kept  int // items written
	ok    bool
}

// rhoParams is what keying a job needs besides the job.
type rhoParams struct {
	now, minService, gpus float64
	n                     int
}

// rhoEntOf reads what ρ takes of the active job j at position p.
func rhoEntOf(j *policy.Job, p int) rhoEnt {
	e := rhoEnt{pos: int32(p), state: int32(stateTie(j)), submit: j.Submit, share: gpuShare(j),
		x: j.Executed, since: math.Inf(1)}
	if j.Accrues() {
		e.since = j.Accrual.Since
	}
	return e
}

// key is e's first key as an integer (floatKey of −ρ), bit for bit as
// Fair.rhoParts and rhoOf compute it: Executed advances as Accrual.At
// advances it (a job that does not accrue has since = +Inf, so dt ≤ 0).
func (kp *rhoParams) key(e *rhoEnt) uint64 {
	ex := e.x
	if dt := kp.now - e.since; dt > 0 {
		ex += dt
	}
	rem := max(ex, kp.minService)
	return floatKey(-rhoOf(max(0, kp.now-e.submit)+rem, ex+rem, e.share, kp.n, kp.gpus))
}

// rank ranks the tracked snapshot s; ok is false for an untracked one,
// and then nothing is kept.
func (t *rhoRanks) rank(s *policy.Snapshot, minService, gpus float64) ([]policy.Ranked, bool) {
	if !s.JobsTracked() {
		t.valid = false
		return nil, false
	}
	if !t.valid {
		t.gen, t.active, t.ents, t.last, t.nActive = t.gen[:0], t.active[:0], t.ents[:0], 0, 0
	}
	t.readChanges(s)
	kp := rhoParams{now: s.Now, minService: minService, gpus: gpus, n: t.nActive}
	m, near := t.keyKept(s, &kp)
	fresh := t.keyFresh(&kp)
	if m+len(fresh) != t.nActive { // every active job once: else a bug here
		t.valid = false
		return nil, false
	}
	main := t.items[:m]
	if !near {
		main = t.sortFull(s, append(main, fresh...))
		fresh = nil
	} else if len(fresh) > 1 {
		t.sortFresh(s, fresh)
	}
	t.write(s, main, fresh)
	t.valid = true
	return t.out, true
}

// readChanges compares the stamps by position: a job whose stamp moved
// is read, and if active listed as new (appended to ents); the count of
// active jobs follows. Split into parts side by side, each writing only
// its own positions.
func (t *rhoRanks) readChanges(s *policy.Snapshot) {
	n, oldN := len(s.Jobs), len(t.gen)
	for p := n; p < oldN; p++ { // the list shrank
		if t.active[p] {
			t.nActive--
		}
	}
	t.gen, t.active = growKeep(t.gen, n), growKeep(t.active, n)
	t.changed = grow(t.changed, n)
	w := workers(n)
	t.parts = growKeep(t.parts, w)
	parts := t.parts[:w]
	forRanges(n, w, func(k, lo, hi int) {
		pa := &parts[k]
		pa.fresh, pa.delta = t.changesIn(s, oldN, lo, hi, pa.fresh[:0])
	})
	t.ents = t.ents[:t.last]
	for k := range parts {
		t.nActive += parts[k].delta
		t.ents = append(t.ents, parts[k].fresh...)
	}
}

// changesIn is readChanges' pass over the positions [lo, hi).
func (t *rhoRanks) changesIn(s *policy.Snapshot, oldN, lo, hi int, fresh []rhoEnt) ([]rhoEnt, int) {
	stamps, delta := s.JobGen, 0
	for p := lo; p < hi; p++ {
		g := stamps[p]
		if p < oldN && g != 0 && t.gen[p] == g {
			t.changed[p] = false
			continue
		}
		t.changed[p] = true
		j := s.Jobs[p]
		was, is := p < oldN && t.active[p], isActive(j)
		t.gen[p], t.active[p] = g, is
		if was {
			delta--
		}
		if is {
			delta++
			fresh = append(fresh, rhoEntOf(j, p))
		}
	}
	return fresh, delta
}

// keyKept keys the last ranking's jobs that stay (their stamp holds),
// in parts side by side, each sorting its own by insertion as it keys
// them (the last order's keys barely moved) within a budget of moves,
// then joins the parts. m: the items kept (t.items[:m]); near: they are
// sorted (else in the last order).
func (t *rhoRanks) keyKept(s *policy.Snapshot, kp *rhoParams) (m int, near bool) {
	near = !nearSortOff
	if near && t.skip > 0 {
		t.skip--
		near = false
	}
	tried := near
	t.items = grow(t.items, t.last)
	w := workers(t.last)
	t.parts = growKeep(t.parts, w)
	parts := t.parts[:w]
	forRanges(t.last, w, func(k, lo, hi int) {
		parts[k].kept, parts[k].ok = t.keyRange(s, kp, lo, hi, near)
	})
	for k := range parts {
		lo, _ := rangeOf(k, w, t.last)
		copy(t.items[m:], t.items[lo:lo+parts[k].kept])
		m += parts[k].kept
		near = near && parts[k].ok
	}
	if !near {
		if tried {
			t.backoff = min(max(1, 2*t.backoff), maxNearBackoff)
			t.skip = t.backoff
		}
		return m, false
	}
	t.backoff = 0
	t.nearly++
	nearSorts.Add(1)
	t.joinParts(s, parts, m)
	return m, true
}

// keyRange keys ents[lo:hi] into items[lo:], the jobs gone left out,
// inserting each among the ones before it while near and the budget
// lasts (insertItems' budget). ok: sorted within the budget.
func (t *rhoRanks) keyRange(s *policy.Snapshot, kp *rhoParams, lo, hi int, near bool) (kept int, ok bool) {
	items, changed, n := t.items[lo:hi], t.changed, int32(len(s.Jobs))
	budget := 4*(hi-lo) + 16
	c := 0
	for i := lo; i < hi; i++ {
		e := &t.ents[i]
		if e.pos >= n || changed[e.pos] {
			continue // its job left or changed: listed anew if active
		}
		x := nearItem{f: kp.key(e), i: int32(i)}
		j := c
		for near && j > 0 && t.after(s, &items[j-1], &x) {
			items[j] = items[j-1]
			j--
			if budget--; budget == 0 {
				near = false
			}
		}
		items[j] = x
		c++
	}
	return c, near
}

// after reports that a ranks after b, comparing the jobs only on a tie
// of keys (itemCmp inlines).
func (t *rhoRanks) after(s *policy.Snapshot, a, b *nearItem) bool {
	c := itemCmp(a, b)
	return c > 0 || c == 0 && t.tie(s, a, b) > 0
}

// compare is the full order of two items.
func (t *rhoRanks) compare(s *policy.Snapshot, a, b *nearItem) int {
	if c := itemCmp(a, b); c != 0 {
		return c
	}
	return t.tie(s, a, b)
}

// tie orders two jobs whose ρ ties: running first, then Submit, ID
// (compareSubmit), then position. (An item's queue is 0, as Fair's.)
func (t *rhoRanks) tie(s *policy.Snapshot, a, b *nearItem) int {
	ea, eb := &t.ents[a.i], &t.ents[b.i]
	if ea.state != eb.state {
		return cmpInt(int(ea.state), int(eb.state))
	}
	if c := submitOrder(ea.submit, eb.submit); c != 0 {
		return c
	}
	if c := strings.Compare(s.Jobs[ea.pos].ID, s.Jobs[eb.pos].ID); c != 0 {
		return c
	}
	return cmpInt(int(ea.pos), int(eb.pos))
}

// joinParts merges each sorted part of items[:m] into the sorted ones
// before it where they overlap (nearSort.join): nearly sorted, a few
// items.
func (t *rhoRanks) joinParts(s *policy.Snapshot, parts []rhoPart, m int) {
	mid := 0
	for k := range parts {
		end := mid + parts[k].kept
		if k > 0 {
			t.join(s, t.items[:end], mid)
		}
		mid = end
	}
}

// join sorts xs, whose parts xs[:mid] and xs[mid:] are sorted.
func (t *rhoRanks) join(s *policy.Snapshot, xs []nearItem, mid int) {
	if mid == 0 || mid == len(xs) {
		return
	}
	lo := mid
	for lo > 0 && t.after(s, &xs[lo-1], &xs[mid]) {
		lo--
	}
	if lo == mid {
		return // already in order
	}
	hi := mid
	for hi < len(xs) && t.after(s, &xs[mid-1], &xs[hi]) {
		hi++
	}
	t.window = append(t.window[:0], xs[lo:mid]...)
	a, b, o := t.window, xs[mid:hi], lo
	for len(a) > 0 && len(b) > 0 {
		if t.after(s, &a[0], &b[0]) {
			xs[o], b = b[0], b[1:]
		} else {
			xs[o], a = a[0], a[1:]
		}
		o++
	}
	copy(xs[o:], a) // b's rest is in place
}

// keyFresh keys the new jobs, ents[last:].
func (t *rhoRanks) keyFresh(kp *rhoParams) []nearItem {
	fresh := t.ents[t.last:]
	t.fitems = grow(t.fitems, len(fresh))
	for k := range fresh {
		t.fitems[k] = nearItem{f: kp.key(&fresh[k]), i: int32(t.last + k)}
	}
	return t.fitems
}

// sortFresh sorts the new jobs' items.
func (t *rhoRanks) sortFresh(s *policy.Snapshot, xs []nearItem) {
	if len(xs) > 4096 {
		t.sortFull(s, xs)
		return
	}
	slices.SortFunc(xs, func(a, b nearItem) int { return t.compare(s, &a, &b) })
}

// sortFull sorts xs in full: a radix sort on the first key's top bits
// that differ (11 a pass, those above coarseRho's: ρ's keys rarely share
// them), then each run that shares them by the full order. Both split
// into parts side by side (a stable scatter from per-part counts; runs
// belong to the part they start in).
func (t *rhoRanks) sortFull(s *policy.Snapshot, xs []nearItem) []nearItem {
	if len(xs) < 2 {
		return xs
	}
	var differ uint64
	for k := range xs {
		differ |= xs[k].f ^ xs[0].f
	}
	t.rad = grow(t.rad, len(xs))
	src, dst := xs, t.rad
	w := workers(len(xs))
	t.counts = growKeep(t.counts, w)
	for shift := uint(coarseRho); shift < 64; shift += 11 {
		if differ>>shift&(1<<11-1) != 0 {
			t.scatter(src, dst, shift, w)
			src, dst = dst, src
		}
	}
	if &src[0] != &xs[0] {
		copy(xs, src)
	}
	// each part sorts the runs that start in it: where they start is
	// found first (read only), so no part reads what another sorts
	var starts [maxWorkers + 1]int
	starts[w] = len(xs)
	forRanges(len(xs), w, func(k, lo, _ int) { starts[k] = runStart(xs, lo) })
	forRanges(len(xs), w, func(k, _, _ int) { t.sortRuns(s, xs[starts[k]:starts[k+1]]) })
	return xs
}

// runStart is the first index from lo where a run of xs sharing the top
// bits starts (len(xs) if none): a run longer than a part belongs whole
// to the part it starts in.
func runStart(xs []nearItem, lo int) int {
	for lo > 0 && lo < len(xs) && xs[lo].f>>coarseRho == xs[lo-1].f>>coarseRho {
		lo++
	}
	return lo
}

// radixCounts is one part's count of each 11-bit digit.
type radixCounts [1 << 11]int32

// scatter is one stable radix pass of src into dst on the 11 bits from
// shift, in w parts: each part counts its digits, the counts become each
// part's offsets (digit by digit, part by part), and each part scatters.
func (t *rhoRanks) scatter(src, dst []nearItem, shift uint, w int) {
	const mask = 1<<11 - 1
	cnt := t.counts[:w]
	forRanges(len(src), w, func(k, lo, hi int) {
		c := &cnt[k]
		clear(c[:])
		for i := lo; i < hi; i++ {
			c[src[i].f>>shift&mask]++
		}
	})
	sum := int32(0)
	for d := range mask + 1 {
		for k := range cnt {
			cnt[k][d], sum = sum, sum+cnt[k][d]
		}
	}
	forRanges(len(src), w, func(k, lo, hi int) {
		c := &cnt[k]
		for i := lo; i < hi; i++ {
			d := src[i].f >> shift & mask
			dst[c[d]] = src[i]
			c[d]++
		}
	})
}

// sortRuns sorts, by the full order, each run of xs sharing the top bits
// the radix passes sorted.
func (t *rhoRanks) sortRuns(s *policy.Snapshot, xs []nearItem) {
	for lo := 0; lo < len(xs); {
		end := lo + 1
		for end < len(xs) && xs[end].f>>coarseRho == xs[lo].f>>coarseRho {
			end++
		}
		if end-lo > 1 {
			slices.SortFunc(xs[lo:end], func(a, b nearItem) int { return t.compare(s, &a, &b) })
		}
		lo = end
	}
}

// write writes the ranking, the sorted kept items main merged with the
// sorted new ones fresh: each rank's entry (the next call's last
// ranking), job, position and last rank. Split into parts of main side
// by side, each with the new jobs that rank among its own (found by
// binary search: the order is total and the two hold distinct jobs).
func (t *rhoRanks) write(s *policy.Snapshot, main, fresh []nearItem) {
	r := len(main) + len(fresh)
	t.next, t.out, t.at, t.prev = grow(t.next, r), grow(t.out, r), grow(t.at, r), grow(t.prev, r)
	w := workers(len(main))
	if w <= 1 || len(main) == 0 {
		t.writeRange(s, main, fresh, 0)
	} else {
		var starts [maxWorkers + 1]int // fresh's split before each part of main
		starts[w] = len(fresh)
		for k := 1; k < w; k++ {
			lo, _ := rangeOf(k, w, len(main))
			x := &main[lo]
			starts[k] = starts[k-1] + sort.Search(len(fresh)-starts[k-1], func(m int) bool {
				return t.compare(s, &fresh[starts[k-1]+m], x) > 0
			})
		}
		forRanges(len(main), w, func(k, lo, hi int) {
			t.writeRange(s, main[lo:hi], fresh[starts[k]:starts[k+1]], lo+starts[k])
		})
	}
	t.ents, t.next = t.next, t.ents
	t.last = r
}

// writeRange writes the merge of a and b (sorted) from rank o.
func (t *rhoRanks) writeRange(s *policy.Snapshot, a, b []nearItem, o int) {
	for len(a) > 0 || len(b) > 0 {
		var x *nearItem
		if len(b) == 0 || len(a) > 0 && !t.after(s, &a[0], &b[0]) {
			x, a = &a[0], a[1:]
		} else {
			x, b = &b[0], b[1:]
		}
		e := &t.ents[x.i]
		t.next[o] = *e
		if t.lazy {
			t.out[o] = policy.Ranked{}
		} else {
			t.out[o] = policy.Ranked{Job: s.Jobs[e.pos]}
		}
		t.at[o] = e.pos + 1
		t.prev[o] = -1
		if int(x.i) < t.last {
			t.prev[o] = x.i
		}
		o++
	}
}
