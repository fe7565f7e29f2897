package policy

import "fmt"

// VerifyTruncate has every lazy trial's narrowing check its sums against
// sums made again from its victims, calling fail with each mismatch,
// until the returned stop.
func VerifyTruncate(fail func(error)) (stop func()) {
	verifyTruncate = func(lz *lazyTrial) {
		if err := lz.verify(); err != nil {
			fail(err)
		}
	}
	return func() { verifyTruncate = nil }
}

// verify recomputes every load, the turned count, the fit count's gain,
// the nodes' relevance and the shares added from the slots the trial
// holds, and reports the first that differs from what it keeps.
func (lz *lazyTrial) verify() error {
	frac, mem := make([]float64, len(lz.loads)), make([]int64, len(lz.loads))
	added := 0.0
	for _, h := range lz.held {
		frac[h.load] += h.frac
		mem[h.load] += h.mem
		added += h.frac
	}
	turned, gain := 0, 0
	for e := range lz.loads {
		l := &lz.loads[e]
		if l.frac != frac[e] || l.mem != mem[e] {
			return fmt.Errorf("load %d holds %v/%d, its slots %v/%d", e, l.frac, l.mem, frac[e], mem[e])
		}
		v, base := lz.freed(l), FreeGPU{Free: l.free, FreeMem: l.freeMem, TotalMem: l.g.TotalMem}
		if v.Whole() != l.whole {
			return fmt.Errorf("load %d whole %v, its sums say %v", e, l.whole, v.Whole())
		}
		if l.whole {
			turned++
		}
		gain += lz.d.FitsOn(&v) - lz.d.FitsOn(&base)
	}
	if turned != lz.turned || added != lz.added {
		return fmt.Errorf("turned %d, added %v; the loads say %d, %v", lz.turned, lz.added, turned, added)
	}
	if lz.count && gain != lz.gain { // preempt_fit.go
		return fmt.Errorf("the count gained %d workers, the loads say %d", lz.gain, gain)
	}
	for ni := range lz.nodes {
		was := lz.nodes[ni].relevant
		lz.relevance(int32(ni))
		if lz.nodes[ni].relevant != was {
			return fmt.Errorf("node record %d relevant %v, its loads say %v", ni, was, !was)
		}
	}
	return nil
}

// CountTestsOff turns the trials' count tests off (or on again).
func CountTestsOff(off bool) { countTestsOff = off }

// CountMinWorkers sets the smallest gang whose trials test by count,
// until the returned restore.
func CountMinWorkers(n int) (restore func()) {
	old := countMinWorkers
	countMinWorkers = n
	return func() { countMinWorkers = old }
}
