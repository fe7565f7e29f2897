package optimus

import (
	"slices"
	"sort"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// waitRun is a run of queued records, queue[lo:hi], that allocate gave
// no GPUs: each gets a Wait, from Waiting[at] on, in queue order.
type waitRun struct {
	at, lo, hi int
}

// admitted lists, in queue order, the records allocate gave GPUs to
// (scratch, refilled by every allocate).
type admitted struct {
	at   []int32
	runs []waitRun
	bufs [][]byte // each part's text buffer
}

// admitSplit is apply's admissions at scale: at 100,000 queued jobs
// nearly every record only gets a Wait (its kept text, or one built
// once), ~1 ms a decision on one core, while ~140 are placed.
// The admitted ones are placed on the caller's goroutine, in queue
// order, as admit places them; the Waits of the runs between them get
// their slots in Waiting where admit would have appended them, and are
// written on w workers afterwards. Each Wait is a function of its own
// record (gainText writes only that record's entry and text slot, sized
// here), so Waiting is the serial loop's, entry for entry.
func (o *Optimus) admitSplit(c *policy.Capacity, queue []qrec, dec *policy.Decision, w int) {
	a := &o.admits
	runs, next := a.runs[:0], 0
	var buf []byte
	for _, i := range a.at {
		runs = reserveWaits(dec, runs, next, int(i))
		buf = o.admit(c, &queue[i], dec, buf)
		next = int(i) + 1
	}
	a.runs = reserveWaits(dec, runs, next, len(queue))
	if n := len(o.buf.slab); len(o.texts) < n { // gainText's slots, never grown in parts
		o.texts = slices.Grow(o.texts, n-len(o.texts))[:n]
	}
	if len(a.bufs) < w {
		a.bufs = make([][]byte, w)
	}
	split(len(queue), w, func(part, lo, hi int) { a.bufs[part] = o.writeWaits(queue, dec.Waiting, lo, hi, a.bufs[part]) })
}

// reserveWaits leaves room in Waiting for the records queue[lo:hi].
func reserveWaits(dec *policy.Decision, runs []waitRun, lo, hi int) []waitRun {
	if hi <= lo {
		return runs
	}
	at := len(dec.Waiting)
	dec.Waiting = slices.Grow(dec.Waiting, hi-lo)[:at+hi-lo]
	return append(runs, waitRun{at: at, lo: lo, hi: hi})
}

// writeWaits writes the reserved Waits of the records queue[lo:hi]; buf
// is the part's text buffer, returned possibly grown.
func (o *Optimus) writeWaits(queue []qrec, waits policy.Waits, lo, hi int, buf []byte) []byte {
	runs := o.admits.runs
	k := sort.Search(len(runs), func(k int) bool { return runs[k].hi > lo })
	for ; k < len(runs) && runs[k].lo < hi; k++ {
		rn := &runs[k]
		from, to := max(lo, rn.lo), min(hi, rn.hi)
		out := rn.at + from - rn.lo
		for i := from; i < to; i++ {
			r := &queue[i]
			if r.text == "" {
				r.text, buf = o.gainText(&o.buf.slab[r.pos], buf)
			}
			waits[out] = policy.Wait{JobID: r.id, Reason: r.text}
			out++
		}
	}
	return buf
}
