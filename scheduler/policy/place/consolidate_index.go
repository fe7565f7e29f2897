package place

import (
	"math"
	"math/bits"
)

// sumIndex groups a fit memo's eligible nodes (those passing every
// single-node test of its demand: enough workers fit, enough whole GPUs
// for a whole-GPU gang, FreeSum covering the gang) by FreeSum, so the
// best-single-node search need not visit every node hosting a worker (a
// burst of thousands of starts visited thousands of nodes each).
//
// The scan keeps the first node in node order unless a later one leaves
// more than 1e-9 less (stopping at a left-over under 1e-9). When the
// smallest eligible FreeSum is more than 1e-6 below every other, that
// chain ends at the lowest-numbered node with the smallest sum: every
// node before it leaves at least ~1e-6 more, and none after leaves less.
// Otherwise (sums closer than that, or more distinct sums than buckets)
// the index answers nothing and the scan runs as before.
type sumIndex struct {
	ok      bool
	words   int
	elig    []uint64 // eligible nodes
	ids     sumIDs   // FreeSum bits -> bucket
	buckets []sumBucket
	spare   []int32 // empty buckets' positions
	// at is each indexed node's bucket (valid where elig has it), and
	// last the bucket add found last: a memo catching up on 10,000
	// changed nodes looked each node's old and new sums up in ids
	at      []int32
	lastKey uint64
	lastID  int32
	lastOK  bool
}

// sumBucket is the eligible nodes with one FreeSum.
type sumBucket struct {
	sum   float64
	count int
	nodes []uint64
}

// maxSumBuckets bounds the distinct sums indexed (33 with quarter shares
// on 8-GPU nodes).
const maxSumBuckets = 64

// eligible reports whether node i passes the memo demand's single-node
// tests (fitMemo.better's, for a gang of at least one worker).
func (m *fitMemo) eligible(i int) bool {
	w := m.d.Workers
	return int(m.fit[i]) >= w && (!m.d.WholeGPU() || int(m.whole[i]) >= w) && !(m.sum[i]+1e-9 < m.d.GPUs())
}

// build indexes every node of the memo.
func (x *sumIndex) build(m *fitMemo) {
	x.words = len(m.nz)
	x.elig = growTo(x.elig, x.words)
	clear(x.elig)
	for id := range x.buckets {
		if b := &x.buckets[id]; b.count > 0 || len(b.nodes) != x.words {
			b.nodes = growTo(b.nodes, x.words)
			clear(b.nodes)
		}
		x.buckets[id].count = 0
	}
	x.ids.clear()
	x.at, x.lastOK = growTo(x.at, len(m.fit)), false
	x.spare = x.spare[:0]
	for id := len(x.buckets) - 1; id >= 0; id-- {
		x.spare = append(x.spare, int32(id))
	}
	x.ok = m.d.Workers >= 1
	for i := range m.fit {
		if x.ok && m.fit[i] > 0 && m.eligible(i) {
			x.add(i, m.sum[i])
		}
	}
}

// update re-files node i after its counts changed (was: it was eligible).
func (x *sumIndex) update(m *fitMemo, i int, was bool) {
	if !x.ok {
		return
	}
	if was {
		x.remove(i)
	}
	if m.eligible(i) {
		x.add(i, m.sum[i])
	}
}

// filed reports whether node i is indexed as eligible.
func (x *sumIndex) filed(i int) bool { return x.ok && x.elig[i>>6]&(1<<(i&63)) != 0 }

func (x *sumIndex) add(i int, sum float64) {
	key := math.Float64bits(sum)
	id, ok := x.lastID, x.lastOK && x.lastKey == key
	if !ok {
		id, ok = x.ids.get(key)
	}
	if !ok {
		switch {
		case len(x.spare) > 0:
			id, x.spare = x.spare[len(x.spare)-1], x.spare[:len(x.spare)-1]
		case len(x.buckets) < maxSumBuckets:
			id = int32(len(x.buckets))
			x.buckets = append(x.buckets, sumBucket{nodes: make([]uint64, x.words)})
		default:
			x.ok = false // too many sums: the scan answers until a rebuild
			return
		}
		x.ids.put(key, id)
		x.buckets[id].sum = sum
	}
	b := &x.buckets[id]
	b.count++
	b.nodes[i>>6] |= 1 << (i & 63)
	x.elig[i>>6] |= 1 << (i & 63)
	x.at[i] = id
	x.lastKey, x.lastID, x.lastOK = key, id, true
}

// remove takes node i out of its bucket (the one of its sum when filed).
func (x *sumIndex) remove(i int) {
	id := x.at[i]
	b := &x.buckets[id]
	b.count--
	b.nodes[i>>6] &^= 1 << (i & 63)
	x.elig[i>>6] &^= 1 << (i & 63)
	if b.count == 0 {
		x.ids.del(math.Float64bits(b.sum))
		x.spare = append(x.spare, id)
		x.lastOK = x.lastOK && x.lastID != id
	}
}

// best is the node the scan would choose (-1: none eligible); ok is
// false when the index cannot tell (see sumIndex).
func (x *sumIndex) best() (int, bool) {
	if !x.ok {
		return 0, false
	}
	b1, b2 := -1, -1
	for id := range x.buckets {
		b := &x.buckets[id]
		if b.count == 0 {
			continue
		}
		switch {
		case b1 < 0 || b.sum < x.buckets[b1].sum:
			b1, b2 = id, b1
		case b2 < 0 || b.sum < x.buckets[b2].sum:
			b2 = id
		}
	}
	if b1 < 0 {
		return -1, true
	}
	if b2 >= 0 && x.buckets[b2].sum-x.buckets[b1].sum < 1e-6 {
		return 0, false
	}
	for wi, word := range x.buckets[b1].nodes {
		if word != 0 {
			return wi<<6 | bits.TrailingZeros64(word), true
		}
	}
	return 0, false // unreachable: the bucket counts a node
}

// sumIDs maps a bucket's FreeSum bits to its id: an open-addressed table
// of sumSlots slots (linear probing, deletion by shifting back, so no
// tombstones), for at most maxSumBuckets keys. A memo catching up on
// 10,000 changed nodes looks two sums up per node; a Go map was an
// eighth of the catch-up.
type sumIDs struct {
	keys [sumSlots]uint64
	ids  [sumSlots]int32 // id + 1; 0 = empty
}

// sumSlots is a power of two, four times maxSumBuckets.
const sumSlots = 4 * maxSumBuckets

// home is key's first slot: the top bits of a multiplicative hash.
func (*sumIDs) home(key uint64) int {
	return int((key * 0x9e3779b97f4a7c15) >> (64 - sumSlotBits))
}

// sumSlotBits is log2(sumSlots).
const sumSlotBits = 8

func (t *sumIDs) get(key uint64) (int32, bool) {
	for i := t.home(key); ; i = (i + 1) & (sumSlots - 1) {
		switch {
		case t.ids[i] == 0:
			return 0, false
		case t.keys[i] == key:
			return t.ids[i] - 1, true
		}
	}
}

// put adds key (not present) with id.
func (t *sumIDs) put(key uint64, id int32) {
	i := t.home(key)
	for t.ids[i] != 0 {
		i = (i + 1) & (sumSlots - 1)
	}
	t.keys[i], t.ids[i] = key, id+1
}

// del removes key (present), moving back each later key of its probe
// run whose home does not lie after the hole.
func (t *sumIDs) del(key uint64) {
	i := t.home(key)
	for t.keys[i] != key || t.ids[i] == 0 {
		i = (i + 1) & (sumSlots - 1)
	}
	for j := i; ; {
		j = (j + 1) & (sumSlots - 1)
		if t.ids[j] == 0 {
			break
		}
		// the key at j stays if its home is cyclically in (i, j]
		if h := t.home(t.keys[j]); (j-h)&(sumSlots-1) < (j-i)&(sumSlots-1) {
			continue
		}
		t.keys[i], t.ids[i] = t.keys[j], t.ids[j]
		i = j
	}
	t.ids[i] = 0
}

func (t *sumIDs) clear() { clear(t.ids[:]) }
