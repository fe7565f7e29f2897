package policy

import "slices"

// holTail is the Wait-writing of the queued jobs behind a blocked head
// (head-of-line blocking): FIFO's every decision once its head does not
// fit, ~116,000 Waits at scale, ~3 ms on one core. Each job's Wait
// depends on the jobs ahead only through two counts, its slot in Waiting
// and how many admissible jobs wait ahead of it, so the pass is split: a
// first split pass classifies each job and counts per part, the parts'
// offsets are summed, and a second split pass writes each Wait into its
// slot. The entries are the serial loop's, in its order.
type holTail struct {
	// kind is each rank's class (from the first rank behind the head)
	kind []uint8
	// parts' counts of queued and admissible jobs, and each part's
	// first slot and hol position
	parts []holPart
	offs  [][2]int
}

// holSplitOff makes waitBehind run serially (benchmarks compare).
var holSplitOff bool

// holPart is one part's counts: its queued jobs (Wait slots) and its
// admissible ones (the hol position grows by one for each).
type holPart struct {
	queued, admissible int
}

// kinds of rank behind a blocked head
const (
	holSkip       uint8 = iota // not queued: no Wait
	holAdmissible              // waits behind the head
	holNever                   // waits for its own reason (admission)
)

// waitBehind writes the Waits of the queued jobs ranked from on, behind
// a blocked head: a job that can never start waits for that reason, the
// others behind their position in line.
func (r *round) waitBehind(from int) {
	n := len(r.ranked) - from
	k := splitParts(n)
	if k <= 1 || holSplitOff {
		r.waitBehindSerial(from)
		return
	}
	t := &r.f.holTail
	t.kind = grow(t.kind, n)
	t.parts = grow(t.parts, k)
	split(n, k, func(part, lo, hi int) { t.parts[part] = r.classify(t.kind, from, lo, hi) })
	at, behind := len(r.dec.Waiting), 1
	offs := grow(t.offs, k)
	t.offs = offs
	for p, c := range t.parts {
		offs[p] = [2]int{at, behind}
		at, behind = at+c.queued, behind+c.admissible
	}
	r.f.holText(behind) // every text the parts read, built here
	r.dec.Waiting = slices.Grow(r.dec.Waiting, at-len(r.dec.Waiting))[:at]
	split(n, k, func(part, lo, hi int) { r.writeBehind(t.kind, from, lo, hi, offs[part]) })
}

// waitBehindSerial is waitBehind on one core.
func (r *round) waitBehindSerial(from int) {
	behind := 1
	for i := from; i < len(r.ranked); i++ {
		if r.state(i) != Queued {
			continue
		}
		if _, ok := r.admissible(i); ok {
			r.waitAt(i, r.f.holText(behind))
			behind++
		}
	}
}

// classify sorts the ranks from+[lo, hi) into kind (indexed from from)
// and counts the part's queued and admissible jobs. It only reads the
// round.
func (r *round) classify(kind []uint8, from, lo, hi int) holPart {
	var c holPart
	for x := lo; x < hi; x++ {
		i := from + x
		switch {
		case r.state(i) != Queued:
			kind[x] = holSkip
			continue
		case r.neverStarts(i):
			kind[x] = holNever
		default:
			kind[x] = holAdmissible
			c.admissible++
		}
		c.queued++
	}
	return c
}

// neverStarts reports that the job at rank i waits for a reason of its
// own (admission).
func (r *round) neverStarts(i int) bool {
	_, why := r.admission(i)
	return why != ""
}

// writeBehind writes the Waits of the part from+[lo, hi), whose first
// slot and hol position are off.
func (r *round) writeBehind(kind []uint8, from, lo, hi int, off [2]int) {
	out, behind := off[0], off[1]
	for x := lo; x < hi; x++ {
		i := from + x
		var why string
		switch kind[x] {
		case holSkip:
			continue
		case holNever:
			_, why = r.admission(i)
		default:
			why = r.f.hol[behind]
			behind++
		}
		r.dec.Waiting[out] = Wait{JobID: r.dec.Ranking[i].JobID, Reason: why}
		out++
	}
}
