package policy

// index fills x for r's ranked jobs: each queued job's shape (or why it
// has none), the queued jobs ranked above each rank, and the ranks of
// each shape. Two passes split across cores, each part with its own
// shape ids, and between them a serial merge of the parts' few shapes.
// It reports false where the shapes are too many to follow.
func (x *skipIndex) index(r *round) bool {
	n := len(r.ranked)
	x.id, x.qcum = grow(x.id, n), grow(x.qcum, n+1)
	k := splitParts(n)
	if len(x.parts) < k {
		x.parts = append(x.parts, make([]skipPart, k-len(x.parts))...)
	}
	parts := x.parts[:k]
	split(n, k, func(p, lo, hi int) { x.classify(r, &parts[p], lo, hi) })
	if !x.merge(parts) {
		return false
	}
	x.ranks = grow(x.ranks, int(x.start[len(x.keys)]))
	split(n, k, func(p, lo, hi int) { x.place(&parts[p], lo, hi) })
	x.qcum[n] = parts[k-1].qbase + parts[k-1].queued
	return true
}

// classify is the first pass over the ranks [lo, hi): each queued job's
// shape by the part's own ids, counted. The shape is the demand's
// (DemandShaper), and why the cluster can never hold it (if so) is asked
// once per shape.
func (x *skipIndex) classify(r *round, pt *skipPart, lo, hi int) {
	pt.set.reset()
	pt.count, pt.never = pt.count[:0], pt.never[:0]
	pt.queued = 0
	last, lastID := shapeBits{}, int32(-1)
	for i := lo; i < hi; i++ {
		in := &r.info[i]
		if in.state != Queued {
			x.id[i] = notQueued
			continue
		}
		pt.queued++
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
				pt.never = append(pt.never, r.fit.Never(d))
			}
		}
		if pt.never[lastID] == "" { // a shape that never fits is not visited
			pt.count[lastID]++
		}
		x.id[i] = lastID
	}
}

// merge gives the parts' shapes the index's ids and each part its place
// in ranks; false where the shapes are more than maxSkipShapes.
func (x *skipIndex) merge(parts []skipPart) bool {
	x.set.reset()
	for p := range parts {
		pt := &parts[p]
		pt.trans = pt.trans[:0]
		for _, b := range pt.set.keys {
			pt.trans = append(pt.trans, x.set.id(b))
		}
	}
	x.keys = x.set.keys
	S := len(x.keys)
	if S > maxSkipShapes {
		return false
	}
	x.never = grow(x.never, S)
	for p := range parts {
		pt := &parts[p]
		for l, why := range pt.never {
			x.never[pt.trans[l]] = why
		}
	}
	// start[g+1] counts shape g, then sums up
	x.start = grow(x.start, S+1)
	clear(x.start)
	for p := range parts {
		pt := &parts[p]
		for l, c := range pt.count {
			x.start[pt.trans[l]+1] += c
		}
	}
	for g := 1; g <= S; g++ {
		x.start[g] += x.start[g-1]
	}
	next := append(x.cur[:0], x.start[:S]...) // x.cur is free until the walk
	q := int32(0)
	for p := range parts {
		pt := &parts[p]
		pt.pos = append(pt.pos[:0], next...)
		for l, c := range pt.count {
			next[pt.trans[l]] += c
		}
		pt.qbase, q = q, q+pt.queued
	}
	x.cur = next
	return true
}

// place is the second pass over the ranks [lo, hi): the index's shape
// ids, the queued jobs above each rank, each queued job's place in
// ranks.
func (x *skipIndex) place(pt *skipPart, lo, hi int) {
	q := pt.qbase
	for i := lo; i < hi; i++ {
		x.qcum[i] = q
		id := x.id[i]
		if id == notQueued {
			continue
		}
		if id >= 0 {
			g := pt.trans[id]
			x.id[i] = g
			if x.never[g] == "" {
				x.ranks[pt.pos[g]] = int32(i)
				pt.pos[g]++
			}
		}
		q++
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
