package order

import (
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// gittinsAt is what 2D-Gittins keeps of the job at one snapshot position
// between tracked calls: its service and index then. A tracked snapshot
// keeps a job at its position, so a job whose service and index hold is
// keyed from one record read and nothing written: keeping them by key
// index instead copied every job's terms to its new index (two buffers
// swapped) on every call. The index's terms (gittinsSpan, 56 bytes) are
// kept apart by position (Gittins.spanAt), read only where the index is
// computed: in one record with them, keying ~122,000 jobs read ~8.8 MB
// where ~2 MB hold what most of them need. A running job keyed loosely
// at service a is pending (gittins_loose.go): service -a, idx the index
// it is keyed by, its terms not to be reused. A record whose index is
// void has service voidSvc.
type gittinsAt struct {
	svc policy.Seconds
	idx float64
}

// voidSvc is the service of a record whose index is void, its terms
// still good (Prepare): NaN equals no service and is not pending.
var voidSvc = math.NaN()

// pending reports a running job keyed loosely, its index not computed
// (gittins_loose.go): its service negated, its terms not to be reused.
func (st *gittinsAt) pending() bool { return st.svc < 0 }

// indexesAt is indexes for a tracked call (each key's k[1] its service,
// at its position): the index state is read and written by position, and
// reuse says the last call was tracked too, so a matched job's record
// (prev[i] ≥ 0: the same job at the same position) is its own from the
// last call.
func (o *Gittins) indexesAt(x *indexPass, lo, hi int) {
	for i := lo; i < hi; i++ {
		k := &x.ks[i]
		a, idx := k.k[1], x.fresh
		st := &o.at[k.at-1]
		kept := x.kept(i, a)
		loose := x.loose && k.k[0] == runningTie
		switch {
		case a == 0:
			if st.svc != 0 { // no terms to keep: a stale record must not serve later
				*st = gittinsAt{}
				o.spanAt[k.at-1] = gittinsSpan{a: -1}
			}
		case loose:
			// keyed by the index last computed for it, so its key holds
			// from call to call (and from an exact call to the next
			// loose one); its index at a is computed if a trial reads it
			// (SortRunning): the record is marked pending, so nothing
			// reuses its terms
			st.svc, idx = -a, st.idx
		case kept && st.svc == a:
			idx = st.idx // nothing moved: nothing to write
		default:
			idx = o.termsIndex(a, &o.spanAt[k.at-1], kept && !st.pending())
			st.svc, st.idx = a, idx
		}
		k.queue, k.k[1] = int32(o.q.queueOf(a)), -idx // in place (keyed.set)
	}
}
