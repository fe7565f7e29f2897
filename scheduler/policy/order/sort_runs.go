package order

import (
	"slices"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// sortRunsPar is sortRuns with the runs split across w workers: each
// range of idx is moved to start at a run's start, so no run is split
// and each is sorted by one worker, as the serial pass sorts it.
func (r *radix) sortRunsPar(ks []keyed, idx []int32, mask [4]uint64, last, w int) {
	same := r.runs(mask, last, len(idx))
	n := len(idx)
	var starts [maxWorkers + 1]int
	for k := 1; k < w; k++ {
		lo, _ := rangeOf(k, w, n)
		lo = max(lo, starts[k-1])
		for lo > 0 && lo < n && same.at(idx, lo-1, lo) {
			lo++
		}
		starts[k] = lo
	}
	starts[w] = n
	forRanges(w, w, func(k, _, _ int) {
		lo, hi := starts[k], starts[k+1]
		r.sortRunsIn(ks, idx[lo:hi], same.slice(lo, hi), &r.recs[k])
	})
}

// runFinder finds the runs of keys equal in every bit of a mask. The
// field the radix passes sorted last (the most significant that varies)
// is compared first, on its integers in sorted order (r.keys after the
// passes), read in sequence; the other fields are read by key index, at
// random, only for keys equal in it. Reading every field at random was
// ~5 ms of CPU a fair decision at 10k in profiles (its keys mostly
// differ in ρ); side by side, fair's ordering took 7 % less wall time
// and 2D-Gittins' the same.
type runFinder struct {
	fs [4][]uint64 // the other fields sorted by, and their masks
	ms [4]uint64
	nf int
	// sorted is the last pass's field by position in idx (nil when no
	// pass ran), smask its mask
	sorted []uint64
	smask  uint64
}

// runs is the run finder for mask after passes whose last sorted
// field last (-1: none) of n keys.
func (r *radix) runs(mask [4]uint64, last, n int) runFinder {
	var s runFinder
	if last >= 0 {
		s.sorted, s.smask = r.keys[:n], mask[last]
	}
	for f, m := range mask {
		if m != 0 && f != last {
			s.fs[s.nf], s.ms[s.nf] = r.field[f], m
			s.nf++
		}
	}
	return s
}

// slice is s for the positions [lo, hi) of idx, as idx[lo:hi] is.
func (s runFinder) slice(lo, hi int) runFinder {
	if s.sorted != nil {
		s.sorted = s.sorted[lo:hi]
	}
	return s
}

// at reports whether the keys at positions p and q of idx are equal in
// every bit of the mask.
func (s *runFinder) at(idx []int32, p, q int) bool {
	if s.sorted != nil && (s.sorted[p]^s.sorted[q])&s.smask != 0 {
		return false
	}
	a, b := idx[p], idx[q]
	for k := range s.nf {
		if (s.fs[k][a]^s.fs[k][b])&s.ms[k] != 0 {
			return false
		}
	}
	return true
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
// (records in buf). Sorting a run reorders idx only within it, where
// every key is equal in the bits same compares, so same's sorted field
// still describes every position.
func (r *radix) sortRunsIn(ks []keyed, idx []int32, same runFinder, buf *[]runRec) {
	fq, f0, f1, f2 := r.field[3], r.field[0], r.field[1], r.field[2]
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && same.at(idx, lo, hi) {
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
