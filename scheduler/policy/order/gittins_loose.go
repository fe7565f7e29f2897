package order

import (
	"slices"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// In a tracked call without reasons (Snapshot.SkipReasons) 2D-Gittins
// keys its running jobs loosely (policy.RunningSorter): by the index
// last computed for each (kept by position, gittins_pos.go), not by
// their index now. In the live regime at 10k × 100k ~53,000 running
// jobs change their index every call, and computing, sorting and
// merging them was ~2 ms of a decision, most of which preempt nothing;
// keyed loosely they move only when they change queue, and the call
// after an exact one (a queue view's) finds their keys where it left
// them. The Framework sorts the ones a trial reads (SortRunning), by the
// keys an exact call gives them, so its decisions are the same.

// runningTie is stateTie of a running job.
const runningTie = 0

// looseSort is SortRunning's scratch.
type looseSort struct {
	sc  scratch
	ks  []keyed
	tmp []int
}

// DeferRunning lets later calls without reasons key running jobs loosely.
func (o *Gittins) DeferRunning() { o.deferred = true }

// RunningLoose reports that the last call keyed its running jobs loosely.
func (o *Gittins) RunningLoose() bool { return o.loose }

// SortRunning puts ranks (running jobs ranked by the last call, whole
// queues of them) in exact order: their keys as an exact call keys them
// (their index now in k[1]), radix-sorted. Ties after the keys break by
// submit time and ID, as in the ranking, and then by list position
// (tiedByList).
func (o *Gittins) SortRunning(ranks []int) {
	if !o.loose || len(ranks) < 2 {
		return
	}
	if o.cr.fast {
		o.sortRunningByChanges(ranks)
		return
	}
	in, at, vs := &o.sc.inc, o.sc.at, &o.vs
	ks := grow(vs.ks, len(ranks))
	for c, r := range ranks {
		k := in.keys[in.order[r]]
		k.k[1] = -o.runningIndex(int(at[r] - 1))
		ks[c] = k
	}
	vs.ks = ks
	vs.sort(ranks, in.order)
}

// sort puts ranks in the order of their keys (vs.ks, one a rank), ties
// after the keys broken by list position (order[r]: tiedByList).
func (vs *looseSort) sort(ranks []int, order []int32) {
	idx := vs.sc.order(vs.ks)
	vs.tmp = append(vs.tmp[:0], ranks...)
	for c, x := range idx {
		ranks[c] = vs.tmp[x]
	}
	vs.tiedByList(ranks, idx, order)
}

// tiedByList orders each run of ranks whose jobs tie on every key,
// submit time and ID (a job listed twice) by list position (order[r]),
// as the ranking does: the sort broke their ties by loose order. idx is
// the sort's result, ranks's jobs' keys in vs.ks.
func (vs *looseSort) tiedByList(ranks []int, idx []int32, order []int32) {
	for lo := 0; lo < len(ranks); {
		hi := lo + 1
		for hi < len(ranks) && compareKeyed(&vs.ks[idx[lo]], &vs.ks[idx[hi]]) == 0 {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(ranks[lo:hi], func(a, b int) int { return cmpInt(int(order[a]), int(order[b])) })
		}
		lo = hi
	}
}

// runningIndex is the index of a running job the last call keyed
// loosely, from its record: computed at its service, afresh, where the
// record is pending, and kept there as an exact call would have (the
// distribution has not changed since the call).
func (o *Gittins) runningIndex(p int) float64 {
	st := &o.at[p]
	switch {
	case st.svc == 0:
		return o.fresh
	case st.pending():
		a := -st.svc
		st.svc, st.idx = a, o.termsIndex(a, &o.spanAt[p], false)
	}
	return st.idx
}

var _ policy.RunningSorter = (*Gittins)(nil)
