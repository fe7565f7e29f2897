package order

import (
	"slices"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// sortRunsPar is sortRuns with the runs split across w workers: each
// range of idx is moved to start at a run's start, so no run is split
// and each is sorted by one worker, as the serial pass sorts it.
func (r *radix) sortRunsPar(ks []keyed, idx []int32, mask [4]uint64, w int) {
	same := r.sameFunc(mask)
	n := len(idx)
	var starts [maxWorkers + 1]int
	for k := 1; k < w; k++ {
		lo, _ := rangeOf(k, w, n)
		lo = max(lo, starts[k-1])
		for lo > 0 && lo < n && same(idx[lo-1], idx[lo]) {
			lo++
		}
		starts[k] = lo
	}
	starts[w] = n
	forRanges(w, w, func(k, _, _ int) {
		r.sortRunsIn(ks, idx[starts[k]:starts[k+1]], same, &r.recs[k])
	})
}

// sameFunc reports whether two keys are equal in every bit of mask.
func (r *radix) sameFunc(mask [4]uint64) func(a, b int32) bool {
	var fs [4][]uint64 // the fields sorted by, and their masks
	var ms [4]uint64
	nf := 0
	for f, m := range mask {
		if m != 0 {
			fs[nf], ms[nf] = r.field[f], m
			nf++
		}
	}
	return func(a, b int32) bool {
		for k := range nf {
			if (fs[k][a]^fs[k][b])&ms[k] != 0 {
				return false
			}
		}
		return true
	}
}

// runRec is one key of a tie run, copied together for its sort: the
// fields' integers in compareKeyed's order (queue, k[0], k[1], k[2]),
// the job and the key's index. Comparing records compares what
// compareAt compares, without reading the 40-byte keys and converting
// their floats at every comparison (gittins' runs reach thousands of
// jobs that differ only in submit time and ID).
type runRec struct {
	f   [4]uint64
	sub float64 // job.Submit, read only for runs of equal fields
	job *policy.Job
	i   int32
}

// compareRec is compareAt on records: the same result for every pair,
// so a sort of the records makes the same comparisons and moves as the
// same sort of the indexes.
func compareRec(a, b *runRec) int {
	for k := range a.f {
		if x, y := a.f[k], b.f[k]; x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	if c := compareSubmit(a.job, b.job); c != 0 {
		return c
	}
	return cmpInt(int(a.i), int(b.i))
}

// compareTied is compareRec for records of equal fields, whose sub was
// read: compareSubmit without reading the jobs' Submit again.
func compareTied(a, b *runRec) int {
	if c := submitOrder(a.sub, b.sub); c != 0 {
		return c
	}
	if c := strings.Compare(a.job.ID, b.job.ID); c != 0 {
		return c
	}
	return cmpInt(int(a.i), int(b.i))
}

// sortRunsIn sorts each run of idx that same finds in compareAt's order
// (records in buf).
func (r *radix) sortRunsIn(ks []keyed, idx []int32, same func(a, b int32) bool, buf *[]runRec) {
	fq, f0, f1, f2 := r.field[3], r.field[0], r.field[1], r.field[2]
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && same(idx[lo], idx[hi]) {
			hi++
		}
		if hi-lo > 1 {
			// after full passes a run ascends by index (the passes are
			// stable), so breaking full ties by index keeps that order
			recs := (*buf)[:0]
			for _, x := range idx[lo:hi] {
				recs = append(recs, runRec{f: [4]uint64{fq[x], f0[x], f1[x], f2[x]}, job: ks[x].job, i: x})
			}
			sortRun(recs)
			for k := range recs {
				idx[lo+k] = recs[k].i
				recs[k].job = nil // hold no job past the sort
			}
			*buf = recs
		}
		lo = hi
	}
}

// sortRun sorts a run's records by compareRec. Where every record has
// the same fields (true ties: gittins' runs of jobs queued at one time),
// each comparison reads the jobs' Submit, so it is read once into the
// records, and the sort compares by compareTied, which then returns
// what compareRec does.
func sortRun(recs []runRec) {
	for k := 1; k < len(recs); k++ {
		if recs[k].f != recs[0].f {
			slices.SortFunc(recs, func(a, b runRec) int { return compareRec(&a, &b) })
			return
		}
	}
	for k := range recs {
		recs[k].sub = recs[k].job.Submit
	}
	slices.SortFunc(recs, func(a, b runRec) int { return compareTied(&a, &b) })
}
