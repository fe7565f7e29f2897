package optimus

import (
	"slices"

	parts "github.com/caravan-dl/caravan/internal/split"
)

// mergeSplit is mergeOrder's merge at scale, a two-phase merge
// (internal/split) over w parts of the last order: each part marks
// which of its records stay (their jobs unchanged) and counts them;
// PlaceAdds gives each part the fresh records it takes and its output
// offset; each part writes its own records. At 100,000 queued jobs each
// record's check reads the job tracker at its position, a miss, and the
// serial merge was ~1.5 ms of a decision. fresh is sorted; before is a
// total order and a fresh record never shares a staying one's position,
// so the result is the serial merge's.
func (o *Optimus) mergeSplit(fresh []qrec, w int) []qrec {
	q := &o.queue
	recs, n := q.recs, len(o.buf.slab)
	q.stay = slices.Grow(q.stay[:0], len(recs))[:len(recs)]
	if len(q.mparts) < w {
		q.mparts = make([]parts.MergePart, w)
	}
	stay, ps := q.stay, q.mparts[:w]
	split(len(recs), w, func(k, lo, hi int) {
		kept, last := 0, -1
		for i := lo; i < hi; i++ {
			p := int(recs[i].pos)
			stay[i] = p < n && o.track.Same(p)
			if stay[i] {
				kept, last = kept+1, i
			}
		}
		ps[k].Kept, ps[k].Last = kept, last
	})
	keptAll, addsAt := parts.PlaceAdds(ps, len(fresh), func(a, last int) bool { return !o.before(&fresh[a], &recs[last]) })
	size := keptAll + len(fresh)
	merged := slices.Grow(q.spare[:0], size)[:size]
	split(len(recs), w, func(k, lo, hi int) {
		pa := &ps[k]
		out, f := pa.Out, pa.Lo
		for i := lo; i < hi; i++ {
			if !stay[i] {
				continue // changed: among the fresh ones if still queued
			}
			for ; f < pa.Hi && o.before(&fresh[f], &recs[i]); f, out = f+1, out+1 {
				merged[out] = fresh[f]
			}
			merged[out] = recs[i]
			merged[out].admit = false
			out++
		}
	})
	copy(merged[keptAll+addsAt:], fresh[addsAt:])
	return merged
}
