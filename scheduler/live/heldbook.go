package live

import (
	"time"
	"unsafe"
)

// heldBook keeps, from round to round, what caravan's own entries hold
// on each GPU, and when each GPU was last held, so that a round's GPU
// book costs what changed rather than a pass over every held GPU of
// every job with three string-keyed map operations each: at 1,000 nodes
// and 18,000 jobs that pass and touch's were a third of an idle round
// (issue #20: a round's cost should grow with the changes, not the
// cluster). The book a round gets is newGPUBook's, entry for entry
// (TestHeldBookMatchesRebuild): caravan's sums, raised to the driver's
// fingerprint on GPUs caravan has not held for fingerprintLag.
//
// An entry's contribution is kept beside it (entry.booked) and moved only
// when its held placement is another slice; an entry that leaves the
// list (refresh replaced or dropped it) is taken out by drop. The sums
// are made again from every entry on a full round, and whenever a node
// appears, goes or changes its GPUs (a whole-GPU slot counts the GPU's
// memory).
type heldBook struct {
	gpus   map[string][]heldGPU // usable nodes' GPUs, by node ID and index
	stray  map[gpuKey]*heldGPU  // held GPUs outside them (a drained node's)
	layout map[string]*nodeInfo // the nodes the sums were made against
	epoch  uint64               // moves on every remake: older bookings are void
	last   time.Time            // the last round's time
	out    *gpuBook             // the round book's storage, reused
}

// heldGPU is one GPU's sums of caravan's holdings, how many entries hold
// it, and, once none does, the last round in which one did (zero: none
// within fingerprintLag that the book knows of).
type heldGPU struct {
	sum     use
	holders int32
	heldAt  time.Time
}

// booking is what an entry last put into the held book.
type booking struct {
	ts    []target
	epoch uint64
	on    bool
}

func newHeldBook() *heldBook {
	return &heldBook{gpus: map[string][]heldGPU{}, stray: map[gpuKey]*heldGPU{}, layout: map[string]*nodeInfo{}}
}

// book brings the sums up to es and returns this round's GPU book. full
// remakes the sums from es (a full round's entries are all new).
func (h *heldBook) book(nodes map[string]*nodeInfo, es []*entry, now time.Time, full bool) *gpuBook {
	if full || h.epoch == 0 || h.moved(nodes) { // epoch 0: never made
		h.remake(nodes, es)
	} else {
		for _, e := range es {
			if !e.booked.on || !sameSlice(e.booked.ts, e.held) {
				h.drop(e)
				h.add(e)
			}
		}
	}
	h.last = now
	return h.round(nodes, now)
}

// round is the book for this round: the sums, raised to the fingerprint
// where it can be trusted. Its storage is the round's own (the round
// commits its admissions into it) and is reused by the next round, which
// writes every GPU of it again: nothing keeps a round's book past it.
func (h *heldBook) round(nodes map[string]*nodeInfo, now time.Time) *gpuBook {
	l := h.out
	if l == nil {
		l = &gpuBook{used: make(map[string][]use, len(nodes))}
		h.out = l
	}
	l.nodes = nodes
	for id, n := range nodes {
		us := l.used[id]
		if len(us) != len(n.GPUs) {
			us = make([]use, len(n.GPUs))
			l.used[id] = us
		}
		gs := h.gpus[id]
		for i, g := range n.GPUs {
			var hg heldGPU // (moved remakes the sums for a new layout)
			if i < len(gs) {
				hg = gs[i]
			}
			us[i] = hg.sum
			if hg.recent(now) {
				continue // caravan's own book only (see gpuBook)
			}
			us[i].Fraction = max(us[i].Fraction, 1-g.FreeFraction)
			us[i].MemMiB = max(us[i].MemMiB, g.MemoryMiB-g.FreeMemMiB)
		}
	}
	if len(l.used) > len(nodes) { // a node went
		for id := range l.used {
			if _, ok := nodes[id]; !ok {
				delete(l.used, id)
			}
		}
	}
	return l
}

// recent reports whether caravan holds g or held it within
// fingerprintLag of now: its fingerprint may still show that use.
func (g *heldGPU) recent(now time.Time) bool {
	return g.holders > 0 || !g.heldAt.IsZero() && now.Sub(g.heldAt) <= fingerprintLag
}

// at is where the book keeps t's GPU: a usable node's, else a stray one
// (made if create is set; nil otherwise).
func (h *heldBook) at(t target, create bool) (g *heldGPU, summed bool) {
	if gs := h.gpus[t.NodeID]; t.GPU >= 0 && t.GPU < len(gs) {
		return &gs[t.GPU], true
	}
	k := gpuKey{t.NodeID, t.GPU}
	g = h.stray[k]
	if g == nil && create {
		g = &heldGPU{}
		h.stray[k] = g
	}
	return g, false
}

// add books e's held GPUs: sums on usable nodes' GPUs (as newGPUBook
// counts them), holders on every GPU.
func (h *heldBook) add(e *entry) {
	e.booked = booking{ts: e.held, epoch: h.epoch, on: true}
	for _, t := range e.held {
		g, summed := h.at(t, true)
		g.holders++
		if summed {
			g.sum.Fraction += t.Fraction
			g.sum.MemMiB += slotMem(h.layout[t.NodeID], t)
		}
	}
}

// drop takes back what e booked, if it booked anything since the last
// remake. Its bookings held through the last round, so a GPU nobody
// holds any more was last held then; it sums to exactly zero (no float
// residue from adding and taking fractions).
func (h *heldBook) drop(e *entry) {
	b := e.booked
	e.booked = booking{}
	if !b.on || b.epoch != h.epoch {
		return
	}
	for _, t := range b.ts {
		g, summed := h.at(t, false)
		if g == nil {
			continue
		}
		if summed {
			g.sum.Fraction -= t.Fraction
			g.sum.MemMiB -= slotMem(h.layout[t.NodeID], t)
		}
		if g.holders--; g.holders <= 0 {
			g.holders, g.sum, g.heldAt = 0, use{}, h.last
		}
	}
}

// remake makes the sums again from es against nodes, keeping when each
// GPU was last held (a stray one's until that is over fingerprintLag
// ago).
func (h *heldBook) remake(nodes map[string]*nodeInfo, es []*entry) {
	last := map[gpuKey]time.Time{}
	keep := func(k gpuKey, g *heldGPU) {
		at := g.heldAt
		if g.holders > 0 {
			at = h.last // held until the last round
		}
		if !at.IsZero() && h.last.Sub(at) <= fingerprintLag {
			last[k] = at
		}
	}
	for id, gs := range h.gpus {
		for i := range gs {
			keep(gpuKey{id, i}, &gs[i])
		}
	}
	for k, g := range h.stray {
		keep(k, g)
	}
	h.epoch++
	h.gpus, h.stray = make(map[string][]heldGPU, len(nodes)), map[gpuKey]*heldGPU{}
	clear(h.layout)
	for id, n := range nodes {
		gs := make([]heldGPU, len(n.GPUs))
		for i := range gs {
			k := gpuKey{id, i}
			gs[i].heldAt = last[k]
			delete(last, k)
		}
		h.gpus[id], h.layout[id] = gs, n
	}
	for k, at := range last {
		h.stray[k] = &heldGPU{heldAt: at}
	}
	for _, e := range es {
		h.add(e)
	}
}

// moved reports whether the nodes are not those the sums were made
// against: one appeared or went, or changed its GPUs' count or memory.
// A node event that changed only free capacity keeps the sums, and the
// new nodeInfo is adopted as the one they were made against.
func (h *heldBook) moved(nodes map[string]*nodeInfo) bool {
	if len(nodes) != len(h.layout) {
		return true
	}
	for id, n := range nodes {
		o, ok := h.layout[id]
		if !ok {
			return true
		}
		if o == n {
			continue
		}
		if !sameLayout(o, n) {
			return true
		}
		h.layout[id] = n
	}
	return false
}

// sameLayout reports whether a and b have the same GPUs as far as the
// sums go: their count and memory.
func sameLayout(a, b *nodeInfo) bool {
	if len(a.GPUs) != len(b.GPUs) {
		return false
	}
	for i := range a.GPUs {
		if a.GPUs[i].MemoryMiB != b.GPUs[i].MemoryMiB {
			return false
		}
	}
	return true
}

// slotMem is gpuBook.slotMem for a target on node n (nil: unknown).
func slotMem(n *nodeInfo, t target) int64 {
	if t.MemMiB == 0 && t.Fraction >= 1-eps && n != nil && t.GPU >= 0 && t.GPU < len(n.GPUs) {
		return n.GPUs[t.GPU].MemoryMiB
	}
	return t.MemMiB
}

// sameSlice reports whether a and b are the same slice (not merely equal
// contents): an entry's held placement is replaced, never edited.
func sameSlice(a, b []target) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}
