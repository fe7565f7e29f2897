package policy

// The index's shape ids. A queued job's shape is worked out from its
// entry (its demand, looked up among the shapes) once: the walk keeps
// the shapes it has seen in a set whose ids outlive the round (kept),
// and writes each classified entry's kept id into it (rankInfo.shape),
// which the rank pass carries from round to round with an unchanged
// job's entry. At 100,000 jobs looking up every queued job's shape was
// about two thirds of the index's time. A round's index numbers only the
// shapes that have queued jobs in it, in kept order.

// keptShapesMax bounds the kept shapes: past it the set starts afresh
// (and every entry's kept id is forgotten). Tests lower it.
var keptShapesMax = 1024

// localID encodes a part's own id l of a shape not kept yet in
// skipIndex.id during the first pass (below notQueued and inadmissible).
func localID(l int32) int32 { return -3 - l }

// index fills x for r's ranked jobs: each queued job's shape (or why it
// has none), the queued jobs ranked above each rank, and the ranks of
// each shape. Two passes split across cores and between them a serial
// merge of the parts' few shapes. It reports false where the shapes are
// too many to follow.
func (x *skipIndex) index(r *round) bool {
	n := len(r.ranked)
	x.id, x.qcum = grow(x.id, n), grow(x.qcum, n+1)
	if len(x.kept.slots) == 0 || len(x.kept.keys) > keptShapesMax {
		x.forgetKept(r) // or readies the set, at the first index
	}
	k := splitParts(n)
	if len(x.parts) < k {
		x.parts = append(x.parts, make([]skipPart, k-len(x.parts))...)
	}
	parts := x.parts[:k]
	kept := len(x.kept.keys)
	victims := r.preemptive && r.victimsByInfo()
	split(n, k, func(p, lo, hi int) { x.classify(r, &parts[p], lo, hi, kept, victims) })
	x.victims = victims
	if !x.merge(r, parts) {
		return false
	}
	x.ranks = grow(x.ranks, int(x.start[len(x.keys)]))
	split(n, k, func(p, lo, hi int) { x.place(r, &parts[p], lo, hi) })
	x.qcum[n] = parts[k-1].qbase + parts[k-1].queued
	return true
}

// forgetKept starts the kept shapes afresh: no entry the rank pass may
// copy keeps an id of the old set.
func (x *skipIndex) forgetKept(r *round) {
	x.kept.reset()
	x.kdem = x.kdem[:0]
	for _, info := range [][]rankInfo{r.info, r.f.jobs.info[0], r.f.jobs.info[1]} {
		for i := range info {
			info[i].shape = 0
		}
	}
}

// classify is the first pass over the ranks [lo, hi): each queued job's
// kept shape id, counted, or where the entry has none, its shape by the
// part's own ids (the demand's, DemandShaper), counted apart. With
// victims it lists the preemptable running jobs' ranks (findVictims'
// pass, which the walk then skips).
func (x *skipIndex) classify(r *round, pt *skipPart, lo, hi, kept int, victims bool) {
	pt.set.reset()
	pt.count, pt.dems, pt.victims = pt.count[:0], pt.dems[:0], pt.victims[:0]
	pt.kcount = grow(pt.kcount, kept)
	clear(pt.kcount)
	pt.queued = 0
	last, lastID := shapeBits{}, int32(-1)
	for i := lo; i < hi; i++ {
		in := &r.info[i]
		if JobState(in.state) != Queued {
			x.id[i] = notQueued
			if victims && r.victimAt(i) {
				pt.victims = append(pt.victims, i)
			}
			continue
		}
		pt.queued++
		if g := in.shape - 1; g >= 0 && int(g) < kept {
			pt.kcount[g]++
			x.id[i] = g
			continue
		}
		d, ok := in.demand()
		if !ok {
			x.id[i] = inadmissible // an invalid request
			continue
		}
		b := shapeBits{workers: d.Workers, frac: floatBits(d.Fraction), mem: d.MemMiB}
		if lastID < 0 || b != last { // neighbours often share a shape
			last, lastID = b, pt.set.id(b)
			if int(lastID) == len(pt.count) {
				pt.count = append(pt.count, 0)
				pt.dems = append(pt.dems, d)
			}
		}
		pt.count[lastID]++
		x.id[i] = localID(lastID)
	}
}

// merge keeps the parts' new shapes, numbers this round's shapes (those
// with queued jobs, asking once each why the cluster can never hold it,
// if so: its jobs are not visited) and gives each part its place in
// ranks; false where the shapes are more than maxSkipShapes.
func (x *skipIndex) merge(r *round, parts []skipPart) bool {
	for p := range parts {
		pt := &parts[p]
		pt.trans = pt.trans[:0]
		for l, b := range pt.set.keys {
			g := x.kept.id(b)
			if int(g) == len(x.kdem) {
				x.kdem = append(x.kdem, pt.dems[l])
			}
			pt.trans = append(pt.trans, g)
		}
	}
	G := len(x.kept.keys)
	total := grow(x.total, G)
	x.total, x.known = total, 0
	clear(total)
	for p := range parts {
		pt := &parts[p]
		for g, c := range pt.kcount {
			total[g] += c
			x.known += int(c)
		}
		for l, c := range pt.count {
			total[pt.trans[l]] += c
		}
	}
	x.dense = grow(x.dense, G)
	x.keys, x.never = x.keys[:0], x.never[:0]
	for g, c := range total {
		x.dense[g] = -1
		if c > 0 {
			x.dense[g] = int32(len(x.keys))
			x.keys = append(x.keys, x.kept.keys[g])
			x.never = append(x.never, r.fit.Never(x.kdem[g]))
		}
	}
	S := len(x.keys)
	if S > maxSkipShapes {
		return false
	}
	// start[d+1] counts shape d's jobs that may fit, then sums up
	x.start = grow(x.start, S+1)
	clear(x.start)
	for g, c := range total {
		if d := x.dense[g]; d >= 0 && x.never[d] == "" {
			x.start[d+1] = c
		}
	}
	for d := 1; d <= S; d++ {
		x.start[d] += x.start[d-1]
	}
	next := append(x.cur[:0], x.start[:S]...) // x.cur is free until the walk
	q := int32(0)
	for p := range parts {
		pt := &parts[p]
		pt.pos = append(pt.pos[:0], next...)
		for g, c := range pt.kcount {
			x.advance(next, g, c)
		}
		for l, c := range pt.count {
			x.advance(next, int(pt.trans[l]), c)
		}
		pt.qbase, q = q, q+pt.queued
	}
	x.cur = next
	return true
}

// advance moves next past c jobs of kept shape g, where they go to ranks.
func (x *skipIndex) advance(next []int32, g int, c int32) {
	if d := x.dense[g]; c > 0 && x.never[d] == "" {
		next[d] += c
	}
}

// place is the second pass over the ranks [lo, hi): the index's shape
// ids, the queued jobs above each rank, each queued job's place in
// ranks. An entry classified by the part's own ids keeps its kept id.
func (x *skipIndex) place(r *round, pt *skipPart, lo, hi int) {
	q := pt.qbase
	for i := lo; i < hi; i++ {
		x.qcum[i] = q
		id := x.id[i]
		if id == notQueued {
			continue
		}
		q++
		if id == inadmissible {
			continue
		}
		if id < 0 {
			id = pt.trans[localID(id)] // localID is its own inverse
			r.info[i].shape = id + 1
		}
		d := x.dense[id]
		x.id[i] = d
		if x.never[d] == "" {
			x.ranks[pt.pos[d]] = int32(i)
			pt.pos[d]++
		}
	}
}

// shapeSet gives shapes dense ids in the order first seen: open
// addressing on shapeBits.hash, kept at most half full.
type shapeSet struct {
	keys  []shapeBits
	slots []int32 // 1 + the id of the key there; 0: empty
	shift uint    // 64 - log2(len(slots))
}

// reset empties s, keeping its storage.
func (s *shapeSet) reset() {
	s.keys = s.keys[:0]
	if len(s.slots) == 0 {
		s.slots, s.shift = make([]int32, 64), 64-6
	}
	clear(s.slots)
}

// id is b's id, given it on first sight.
func (s *shapeSet) id(b shapeBits) int32 {
	mask := uint64(len(s.slots) - 1)
	for k := b.hash() >> s.shift; ; k = (k + 1) & mask {
		e := s.slots[k]
		if e == 0 {
			s.keys = append(s.keys, b)
			s.slots[k] = int32(len(s.keys))
			if 2*len(s.keys) > len(s.slots) {
				s.grow()
			}
			return int32(len(s.keys) - 1)
		}
		if s.keys[e-1] == b {
			return e - 1
		}
	}
}

// grow doubles s's slots.
func (s *shapeSet) grow() {
	s.slots, s.shift = make([]int32, 2*len(s.slots)), s.shift-1
	mask := uint64(len(s.slots) - 1)
	for i, b := range s.keys {
		k := b.hash() >> s.shift
		for s.slots[k] != 0 {
			k = (k + 1) & mask
		}
		s.slots[k] = int32(i + 1)
	}
}
