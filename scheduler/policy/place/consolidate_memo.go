package place

import (
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/caravan-dl/caravan/internal/split"
	"github.com/caravan-dl/caravan/scheduler/policy"
)

// fitMemos holds a fitMemo per demand, for the few demands (gang shapes)
// a round retries; past maxMemos the oldest is reused.
type fitMemos struct {
	byDemand map[policy.Demand]*fitMemo
	order    []*fitMemo
	next     int
	// searched counts each demand's plain searches since seenAt (the
	// change log restarting resets it: an untracked Capacity's Reset,
	// or the log's bound; past maxSearched demands too): a demand searched
	// again gets a memo, so a round starting hundreds of gangs of a few
	// shapes scans every node once per shape, not once per gang
	searched map[policy.Demand]int
	seenAt   policy.ChangeMark
	seen     []uint64 // scratch for fits, cleared after use
	// uniq and fits are catchUp's scratch: the distinct nodes, their fits
	uniq []int32
	fits []int32
	// cands and sorted are consolidate's candidate list and
	// byFitDesc's, for one placement at a time: a round that starts
	// thousands of gangs allocated them for each, in fresh pages
	cands, sorted []candidate
}

// maxSearched bounds the demands counted: a tracked Capacity's log (and
// so the count) lives across rounds.
const maxSearched = 1024

// maxMemos bounds the memos kept per Capacity (each is ~16 B per node:
// 10 MB in all at 10,000 nodes). Memos outlive a tracked round, and a
// churned 10k round searched 26 shapes: with 16 slots each was evicted
// and rebuilt by a full scan every round.
const maxMemos = 64

// fitMemo is, for one demand, how many workers each node hosts
// (nodeFit) and their total, as of mark. nodeFit is a per-node fact, so
// after releases and commits (a preemption trial) only the changed nodes
// are re-read, where each search scanned every node's GPUs; the searches
// then walk the counts (4 B per node) in node order, as before.
type fitMemo struct {
	ok    bool
	d     policy.Demand
	mark  policy.ChangeMark
	fit   []int32
	total int
	// sum and whole are each node's FreeSum and WholeFree, kept with
	// fit: the best-single-node search reads these compact arrays
	// instead of every node's 112-byte summary (at 10,000 nodes, a
	// search per started gang was a third of a churned decision)
	sum   []float64
	whole []int32
	// nz has bit i set when fit[i] > 0: the searches visit only those
	// nodes, still in node order (a node hosting no worker fails every
	// test), where they read all 10,000 (in a burst of thousands of
	// starts with a few hundred nodes free, two thirds of the decision)
	nz []uint64
	// idx files the nodes passing every single-node test by FreeSum
	// (consolidate_index.go)
	idx sumIndex
}

// fits is nodeFit of every node for d and their total, brought up to
// date through the Capacity's change log; nil when there is no memo for
// d (a first search scans as before, and may stop at an exact fit).
func fits(c *policy.Capacity, d policy.Demand) *fitMemo {
	ms, _ := c.PlacerMemo().(*fitMemos)
	if ms == nil {
		return nil
	}
	m := ms.byDemand[d]
	if m == nil || !m.ok || len(m.fit) != len(c.Nodes) {
		return nil
	}
	changed, ok := c.ChangedSince(m.mark)
	sums, wholes, _ := c.NodeSums()
	maxes := c.NodeMaxFree() // nil where NodeSums is not ok
	// a full scan costs less; or the Capacity, built by hand, keeps no
	// per-node summaries for the catch-up to read
	if !ok || len(changed) > maxCatchUp*len(c.Nodes) || maxes == nil {
		m.ok = false
		return nil
	}
	ms.catchUp(c, m, changed, nodeSums{sums, wholes, maxes})
	m.mark, _ = c.Mark()
	return m
}

// Idle brings every memo up to date through c's change log, between
// decisions (policy.MemoIdler): after a gang spanning every node was
// released or started, the next decision's first search of each shape
// caught its memo up on 10,000 nodes, 2-6 ms of 2D-LAS' live rounds
// after a giant swap. A memo the log outran is dropped there, as a
// search would.
func (ms *fitMemos) Idle(c *policy.Capacity) {
	for _, m := range ms.order {
		if m.ok && len(m.fit) == len(c.Nodes) && ms.byDemand[m.d] == m {
			fits(c, m.d)
		}
	}
}

// refile records node i's new fit f, its FreeSum and WholeFree, and its
// index entry.
func (m *fitMemo) refile(i, f int, sum float64, whole int) {
	if int(m.fit[i]) == f && math.Float64bits(m.sum[i]) == math.Float64bits(sum) && int(m.whole[i]) == whole {
		return // as filed: the index too (a giant preempted for one of its share)
	}
	was := m.idx.filed(i)
	m.total += f - int(m.fit[i])
	m.fit[i] = int32(f)
	m.setNZ(i, f)
	m.sum[i], m.whole[i] = sum, int32(whole)
	m.idx.update(m, i, was)
}

// catchUpSplits counts catch-ups run in parts (tests check it happens).
var catchUpSplits atomic.Int64

// catchUpSplitMin is the fewest logged changes a memo catches up on in
// parts side by side.
var catchUpSplitMin = 2048

// catchUp re-reads the nodes of the log changed since m's mark: their
// distinct nodes in log order (the log repeats nodes), their fits, then
// each refiled in that order. After a gang spanning every node is
// released or started, each shape's memo re-read 10,000 nodes' GPUs
// (~3-5 ms over the shapes the next 128 starts searched): on a log of
// catchUpSplitMin entries or more the fits are computed in parts side
// by side (each reads only, and writes its own entries).
func (ms *fitMemos) catchUp(c *policy.Capacity, m *fitMemo, changed []int32, ns nodeSums) {
	seen := ms.seenScratch(len(c.Nodes))
	uniq := ms.uniq[:0]
	for _, ni := range changed {
		if seen[ni>>6]&(1<<(ni&63)) == 0 {
			seen[ni>>6] |= 1 << (ni & 63)
			uniq = append(uniq, ni)
		}
	}
	clear(seen)
	fs := growTo(ms.fits, len(uniq))
	ms.uniq, ms.fits = uniq, fs
	if len(changed) >= catchUpSplitMin && split.Procs() > 1 {
		catchUpSplits.Add(1)
		k := max(min(split.Procs()*4, len(uniq)/max(catchUpSplitMin/4, 1)), 1)
		split.Run(len(uniq), k, split.Procs(), func(_, lo, hi int) { ms.fitsOf(c, m.d, ns, lo, hi) })
	} else {
		ms.fitsOf(c, m.d, ns, 0, len(uniq))
	}
	for x, ni := range uniq {
		m.refile(int(ni), int(fs[x]), ns.sums[ni], int(ns.wholes[ni]))
	}
}

// nodeSums are the Capacity's per-node summaries a catch-up reads
// (NodeSums, NodeMaxFree).
type nodeSums struct {
	sums   []float64
	wholes []int32
	maxes  []float64
}

// fitsOf computes the fits of d on catchUp's nodes [lo, hi). A node
// where no GPU has a fractional share (nodeFit's first test, on the
// Capacity's per-node arrays: the same values) hosts none, and its GPUs
// and summary are not read: after a giant gang's release or start the
// log lists every node, and every memo caught up read each one's
// summary, a cache miss per node and memo.
func (ms *fitMemos) fitsOf(c *policy.Capacity, d policy.Demand, ns nodeSums, lo, hi int) {
	frac := !d.WholeGPU()
	for x := lo; x < hi; x++ {
		ni := ms.uniq[x]
		if frac && noShare(ns.sums[ni], ns.maxes[ni], d) {
			ms.fits[x] = 0
			continue
		}
		ms.fits[x] = int32(nodeFit(&c.Nodes[ni], d))
	}
}

// maxCatchUp bounds the log entries a memo catches up on, in node
// counts: the log repeats nodes (every trial commits and releases), and a
// churned 10k round logged more entries than nodes, so memos a round
// outlived were rebuilt by full scans where a few thousand nodes changed.
const maxCatchUp = 8

// seenScratch is a cleared bitset over n nodes.
func (ms *fitMemos) seenScratch(n int) []uint64 {
	ms.seen = growTo(ms.seen, (n+63)/64)
	return ms.seen
}

// bestSingleNode is the package bestSingleNode on the memo's compact arrays: the
// same tests and arithmetic, in node order.
func (m *fitMemo) bestSingleNode(d policy.Demand) int {
	best, bestLeft := -1, 0.0
	w, whole, gpus := d.Workers, d.WholeGPU(), d.GPUs()
	if n, ok := m.idx.best(); ok && w >= 1 {
		return n
	}
	if w < 1 { // every node passes the fit test: visit them all
		for i := range m.fit {
			if m.better(i, w, whole, gpus, d.Fraction, &best, &bestLeft) {
				break
			}
		}
		return best
	}
	for wi, word := range m.nz {
		for word != 0 {
			i := wi<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			if m.better(i, w, whole, gpus, d.Fraction, &best, &bestLeft) {
				return best
			}
		}
	}
	return best
}

// better applies the single-node tests to node i, making it the best when
// it leaves less; true on an exact fit (nothing can beat it).
func (m *fitMemo) better(i, w int, whole bool, gpus, frac float64, best *int, bestLeft *float64) bool {
	if int(m.fit[i]) < w || (whole && int(m.whole[i]) < w) || m.sum[i]+1e-9 < gpus {
		return false
	}
	left := m.sum[i] - float64(w)*frac // the share the node keeps
	if *best < 0 || left < *bestLeft-1e-9 {
		*best, *bestLeft = i, left
		return left < 1e-9
	}
	return false
}

// setNZ records whether node i hosts a worker (f > 0).
func (m *fitMemo) setNZ(i, f int) {
	if f > 0 {
		m.nz[i>>6] |= 1 << (i & 63)
	} else {
		m.nz[i>>6] &^= 1 << (i & 63)
	}
}

// remember keeps the fits a full scan found (cs: every node hosting a
// worker) when the Capacity logs its changes.
func remember(c *policy.Capacity, d policy.Demand, cs []candidate) {
	mark, logged := c.Mark()
	if !logged {
		return
	}
	m := memos(c).slot(d)
	if cap(m.fit) < len(c.Nodes) {
		m.fit = make([]int32, len(c.Nodes))
	}
	m.fit = m.fit[:len(c.Nodes)]
	clear(m.fit)
	m.nz = growTo(m.nz, (len(c.Nodes)+63)/64)
	clear(m.nz)
	for _, cd := range cs {
		m.fit[cd.node] = int32(cd.fit)
		m.setNZ(cd.node, cd.fit)
	}
	m.sum, m.whole = growTo(m.sum, len(c.Nodes)), growTo(m.whole, len(c.Nodes))
	for i := range c.Nodes {
		m.sum[i], m.whole[i] = c.Nodes[i].FreeSum, int32(c.Nodes[i].WholeFree)
	}
	m.ok, m.d, m.mark, m.total = true, d, mark, sumFit(cs)
	m.idx.build(m)
}

// memoFor is d's memo when d was searched before in this round (built
// now by one full scan); nil for a first search, which scans as before
// and may stop at an exact fit.
func memoFor(c *policy.Capacity, d policy.Demand) *fitMemo {
	if _, logged := c.Mark(); !logged {
		return nil
	}
	ms := memos(c)
	if _, ok := c.ChangedSince(ms.seenAt); !ok || len(ms.searched) > maxSearched {
		clear(ms.searched)
		ms.seenAt, _ = c.Mark()
	}
	if ms.searched[d]++; ms.searched[d] < 2 {
		return nil
	}
	remember(c, d, candidates(c, d))
	return fits(c, d)
}

// memos is the Capacity's fitMemos, created on first use.
func memos(c *policy.Capacity) *fitMemos {
	ms, _ := c.PlacerMemo().(*fitMemos)
	if ms == nil {
		ms = &fitMemos{byDemand: map[policy.Demand]*fitMemo{}, searched: map[policy.Demand]int{}}
		c.SetPlacerMemo(ms)
	}
	return ms
}

// candidatesOf appends to out the nodes hosting a worker, as candidates
// lists them.
func (m *fitMemo) candidatesOf(out []candidate) []candidate {
	for wi, word := range m.nz {
		for word != 0 {
			i := wi<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			out = append(out, candidate{i, int(m.fit[i])})
		}
	}
	return out
}

// slot is d's memo, taking the oldest one's place when all are in use.
func (ms *fitMemos) slot(d policy.Demand) *fitMemo {
	if m := ms.byDemand[d]; m != nil {
		return m
	}
	var m *fitMemo
	if len(ms.order) < maxMemos {
		m = &fitMemo{}
		ms.order = append(ms.order, m)
	} else {
		m = ms.order[ms.next]
		ms.next = (ms.next + 1) % maxMemos
		delete(ms.byDemand, m.d)
	}
	ms.byDemand[d] = m
	return m
}

// growTo resizes xs to n, reallocating only when its capacity is short
// (every element is then overwritten).
func growTo[T any](xs []T, n int) []T {
	if cap(xs) < n {
		return make([]T, n)
	}
	return xs[:n]
}
