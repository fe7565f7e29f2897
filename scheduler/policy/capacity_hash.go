package policy

import (
	"math"
	"math/bits"
)

// stateHash is a 128-bit digest of every GPU's free state (Free, FreeMem,
// Util, TotalMem, Index, by position), kept current while on: each GPU
// contributes a hash of its position and state, XORed in, so a change
// costs two GPU hashes. The preemption trial memo (preempt_memo.go) keys
// on it, with the totals, to know that the capacity a trial starts from
// is the one a recorded trial started from. It is off until a trial asks
// for it (one pass over every GPU) and goes off again at an untracked
// Reset, so a round without trials pays nothing but a flag test.
//
// While recording, the first change to each GPU saves its state before,
// so the trial's net effect (the GPUs whose bits differ at its end) can
// be stored and replayed.
type stateHash struct {
	on   bool
	a, b uint64
	base []int32 // each node's first GPU number
	// recording (begin/net)
	rec   bool
	stamp []uint32 // by GPU number: saved in this recording
	cur   uint32
	saved []savedGPU
}

// savedGPU is a GPU's state when a recording first changed it.
type savedGPU struct {
	g    *FreeGPU
	ni   int32
	pos  int32
	free float64
	mem  int64
	util float64
}

// saveGPU appends g's state (on node ni at pos) to saved, written field
// by field: a savedGPU literal is built on the stack and copied over
// (its two 4-byte fields then read back by 16-byte loads, which stall
// on the stores just made), a third of a giant gang's apply.
func saveGPU(saved []savedGPU, g *FreeGPU, ni, pos int) []savedGPU {
	saved = append(saved, savedGPU{})
	sv := &saved[len(saved)-1]
	sv.g, sv.ni, sv.pos = g, int32(ni), int32(pos)
	sv.free, sv.mem, sv.util = g.Free, g.FreeMem, g.Util
	return saved
}

// gpuDiff is a GPU's state at the end of a recorded trial, where it
// differs from the start.
type gpuDiff struct {
	ni, pos int32
	free    float64
	mem     int64
	util    float64
}

const (
	hashSeedA = 0x9e3779b97f4a7c15
	hashSeedB = 0xc2b2ae3d27d4eb4f
	hashMulA  = 0xa0761d6478bd642f
	hashMulB  = 0xe7037ed1a0b428db
)

// mix folds a 128-bit product of x and y (each offset by a constant).
func mix(x, y, k uint64) uint64 {
	hi, lo := bits.Mul64(x^k, y^hashMulA)
	return hi ^ lo
}

// gpuHashes are the two lanes' hashes of GPU number id in state g.
func gpuHashes(id int, g *FreeGPU) (uint64, uint64) {
	f, m, u := math.Float64bits(g.Free), uint64(g.FreeMem), math.Float64bits(g.Util)
	t := uint64(g.TotalMem)<<20 ^ uint64(g.Index)
	a := mix(mix(mix(uint64(id), f, hashSeedA), m, hashMulB), u^t*hashMulB, hashSeedB)
	b := mix(mix(mix(uint64(id), u, hashSeedB), f^t, hashSeedA), m, hashMulA)
	return a, b
}

// hashOn turns the digest on (computing it from every GPU) and reports
// the current digest.
func (c *Capacity) hashOn() (uint64, uint64) {
	h := &c.hash
	if h.on {
		return h.a, h.b
	}
	h.base = growSums(h.base, len(c.Nodes))
	h.a, h.b = 0, 0
	id := 0
	for ni := range c.Nodes {
		h.base[ni] = int32(id)
		for k := range c.Nodes[ni].GPUs {
			a, b := gpuHashes(id, &c.Nodes[ni].GPUs[k])
			h.a ^= a
			h.b ^= b
			id++
		}
	}
	h.on = true
	return h.a, h.b
}

// hashOff stops keeping the digest (and any recording).
func (c *Capacity) hashOff() { c.hash.on, c.hash.rec = false, false }

// gpuID is the number of GPU g of node ni (pos: its position there).
func (c *Capacity) gpuID(g *FreeGPU, ni int) (id, pos int) {
	pos = c.gpuPos(g, ni)
	return int(c.hash.base[ni]) + pos, pos
}

// hashOut removes GPU g (number id) from the digest before it changes,
// saving its state when recording; hashIn adds it back after.
func (c *Capacity) hashOut(g *FreeGPU, ni, id, pos int) {
	h := &c.hash
	a, b := gpuHashes(id, g)
	h.a ^= a
	h.b ^= b
	if h.rec && h.stamp[id] != h.cur {
		h.stamp[id] = h.cur
		h.saved = append(h.saved, savedGPU{g: g, ni: int32(ni), pos: int32(pos), free: g.Free, mem: g.FreeMem, util: g.Util})
	}
}

// unhash takes GPU g of node ni out of the digest before it changes
// (hashOut) and returns its number for rehash; -1 when the digest is off.
func (c *Capacity) unhash(g *FreeGPU, ni int) int {
	if !c.hash.on {
		return -1
	}
	id, pos := c.gpuID(g, ni)
	c.hashOut(g, ni, id, pos)
	return id
}

// rehash adds GPU g (number id from unhash) back after it changed.
func (c *Capacity) rehash(g *FreeGPU, id int) {
	if id >= 0 {
		c.hashIn(g, id)
	}
}

func (c *Capacity) hashIn(g *FreeGPU, id int) {
	a, b := gpuHashes(id, g)
	c.hash.a ^= a
	c.hash.b ^= b
}

// beginRecord starts saving the state of each GPU changed from now on
// (the digest must be on).
func (c *Capacity) beginRecord() {
	h := &c.hash
	if len(h.stamp) != c.totalGPUs {
		h.stamp, h.cur = make([]uint32, c.totalGPUs), 0
	}
	h.cur++
	if h.cur == 0 {
		clear(h.stamp)
		h.cur = 1
	}
	h.saved = h.saved[:0]
	h.rec = true
}

// endRecord stops recording and appends to dst the GPUs whose state
// differs bit for bit from when they were first changed.
func (c *Capacity) endRecord(dst []gpuDiff) []gpuDiff {
	h := &c.hash
	h.rec = false
	for _, s := range h.saved {
		g := s.g
		if math.Float64bits(g.Free) != math.Float64bits(s.free) || g.FreeMem != s.mem ||
			math.Float64bits(g.Util) != math.Float64bits(s.util) {
			dst = append(dst, gpuDiff{ni: s.ni, pos: s.pos, free: g.Free, mem: g.FreeMem, util: g.Util})
		}
	}
	return dst
}

// replayDiff sets each GPU of diff to its recorded state and brings the
// nodes' summaries, the change log and the digest up to date; the totals
// are set to freeSum and wholeFree (what the recorded trial left, from
// the same starting state).
func (c *Capacity) replayDiff(diff []gpuDiff, freeSum float64, wholeFree int) {
	c.freeGen++
	for _, df := range diff {
		ni := int(df.ni)
		g := &c.Nodes[ni].GPUs[df.pos]
		id := int(c.hash.base[ni]) + int(df.pos)
		c.hashOut(g, ni, id, int(df.pos))
		g.Free, g.FreeMem, g.Util = df.free, df.mem, df.util
		c.hashIn(g, id)
	}
	c.marks.start(len(c.Nodes))
	for _, df := range diff { // each node once, after all its GPUs are set
		if _, done := c.marks.get(int(df.ni)); !done {
			c.marks.set(int(df.ni), 0)
			c.resummariseOnly(int(df.ni))
		}
	}
	c.freeSum, c.wholeFree = freeSum, wholeFree
}

// resummariseOnly recomputes node i's summary, leaving the totals
// (replayDiff sets them), and logs the change.
func (c *Capacity) resummariseOnly(i int) {
	n := &c.Nodes[i]
	summarise(n)
	c.setSums(i)
	c.track.touch(i)
	c.logChange(i)
}
