package policy

import (
	"fmt"
	"sync/atomic"
)

// A placer that writes a new gang's slots through a GangWriter hands the
// Capacity each slot's GPU as it writes it, and commitPlaced takes those
// instead of finding every slot's node by name and its GPU by Index again
// (resolve). An 80,001-slot gang's resolve was 0.7-1.0 ms of every
// 2D-LAS decision at 10,000 nodes that started one; a start of a few
// slots looked its node up in the name map.
//
// A GangWriter writes a slot from a node and GPU position of the Capacity
// itself, so a slot and its ref agree by construction. commitPlaced uses
// the refs only for the placement the last writer returned, bit for bit
// the same slice (first slot and length), on an unchanged GPU layout;
// anything else is resolved as before.

// GangWriter writes a new gang's slots on a Capacity's GPUs. It is made
// by NewGang, and done once its Placement is taken: a slot put after
// that would write into the refs the commit took.
type GangWriter struct {
	c     *Capacity
	slots []Slot
	refs  []slotRef
	gen   uint64
}

// gangNote is the placement the last GangWriter returned (its refs are
// the first n of the Capacity's gangRefs). checked: every GPU it writes
// holds its slots as commitPlaced's over-commit check finds them, as of
// the GPUs' free state free (Capacity.freeGen).
type gangNote struct {
	base    *Slot
	n       int
	layout  uint64
	checked bool
	free    uint64
	gen     uint64 // its writer's (FreeGPU.gang)
}

// NewGang starts writing a gang of up to n slots (the Placement's
// capacity is room, at least n). Slots may be written side by side, each
// by one goroutine. The last gang started is the one whose refs a commit
// may take.
func (c *Capacity) NewGang(n, room int) GangWriter {
	c.gangGen++
	c.gang.base = nil
	c.gangOver.Store(false)
	refs := grow(c.gangRefs, n)
	c.gangRefs = refs
	return GangWriter{c: c, slots: c.gangSlots(n, max(n, room)), refs: refs, gen: c.gangGen}
}

// PutOn writes k slots from at, workers of d on GPU position gi of node
// ni, as d.Slot names them, and returns the slot after them. Where they
// are the gang's only slots on that GPU, it sums them as the over-commit
// check does (want, slot by slot) against the GPU's free share and
// memory: where they fit, the commit need not check them again.
func (w GangWriter) PutOn(at, ni, gi, k int, d Demand) int {
	n := &w.c.Nodes[ni]
	g := &n.GPUs[gi]
	s := d.Slot(n.Name, g)
	var frac float64
	var mem int64
	for x := at; x < at+k; x++ {
		w.slots[x], w.refs[x] = s, slotRef{g, ni}
		frac += s.Fraction
		mem += s.MemMiB
	}
	if g.gang == w.gen || frac > g.Free+eps || mem > g.FreeMem {
		w.c.gangOver.Store(true) // checked at the commit, as any placement
	}
	g.gang = w.gen
	return at + k
}

// Placement is the gang's first n slots: every slot written (the GPUs
// it stamped are the placement's, for settle: usesGang).
func (w GangWriter) Placement(n int) Placement {
	p := Placement{Slots: w.slots[:n]}
	if c := w.c; n > 0 && w.gen == c.gangGen {
		c.gang = gangNote{base: &w.slots[0], n: n, layout: c.layout, checked: !c.gangOver.Load(), free: c.freeGen, gen: w.gen}
	}
	return p
}

// noted returns p's refs as its GangWriter wrote them, where p is the
// placement it returned last on this layout, whether its GPUs were
// checked as they are still (no GPU's free state changed since), and
// its writer (the stamp of its GPUs); the note is used once.
func (c *Capacity) noted(p Placement) (refs []slotRef, checked bool, gen uint64) {
	nt := c.gang
	if gangNotesOff || nt.base == nil || len(p.Slots) != nt.n || &p.Slots[0] != nt.base || nt.layout != c.layout {
		return nil, false, 0
	}
	refs = c.gangRefs[:nt.n]
	c.gang = gangNote{}
	c.gangRefs = c.placed[:0] // the refs become c.placed: its storage is the next gang's
	checked = nt.checked && nt.free == c.freeGen
	if verifyGangs {
		c.verifyNoted(p, refs, checked, nt.gen)
	}
	return refs, checked, nt.gen
}

// usesGang reports whether any resolved slot of refs is on a GPU the
// writer gen stamped: a GPU of the gang it wrote.
func usesGang(refs []slotRef, gen uint64) bool {
	for _, rf := range refs {
		if rf.g != nil && rf.g.gang == gen {
			return true
		}
	}
	return false
}

// gangNotesOff makes commitPlaced resolve every gang (tests compare).
var gangNotesOff bool

// verifyGangs makes every noted gang's refs be checked against resolve,
// and counted in writtenGangs (tests: off the commit's path otherwise).
var (
	verifyGangs                bool
	writtenGangs, checkedGangs atomic.Int64
)

// verifyNoted panics where refs are not what resolve finds for p, p is
// checked and over-commits a GPU, or the GPUs its writer gen stamped are
// not p's.
func (c *Capacity) verifyNoted(p Placement, refs []slotRef, checked bool, gen uint64) {
	writtenGangs.Add(1)
	want, err := c.resolve(p, nil)
	if err != nil {
		panic(fmt.Sprintf("a written gang does not resolve: %v", err))
	}
	for i := range want {
		if want[i] != refs[i] {
			panic(fmt.Sprintf("a written gang's slot %d resolves to node %d GPU %d, noted node %d GPU %d",
				i, want[i].ni, want[i].g.Index, refs[i].ni, refs[i].g.Index))
		}
	}
	stamped := map[*FreeGPU]bool{}
	for ni := range c.Nodes {
		for k := range c.Nodes[ni].GPUs {
			if g := &c.Nodes[ni].GPUs[k]; g.gang == gen {
				stamped[g] = true
			}
		}
	}
	own := map[*FreeGPU]bool{}
	for _, rf := range refs {
		if !stamped[rf.g] {
			panic(fmt.Sprintf("a written gang's GPU %d of node %d is not stamped", rf.g.Index, rf.ni))
		}
		own[rf.g] = true
	}
	if len(stamped) != len(own) {
		panic(fmt.Sprintf("%d GPUs stamped by a written gang, %d its", len(stamped), len(own)))
	}
	if checked {
		checkedGangs.Add(1)
		if err := c.overCommitted(p, refs); err != nil {
			panic(fmt.Sprintf("a written gang checked as fitting over-commits: %v", err))
		}
	}
}
