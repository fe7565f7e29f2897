package policy

// nodeMarks marks nodes, with a value each, for one pass at a time
// without clearing between passes: a node is marked when its stamp is the
// pass's. Big gangs' Commit and apply use it where they built a map per
// gang.
type nodeMarks struct {
	stamp []uint32
	val   []int32
	cur   uint32
}

// start begins a pass over n nodes: nothing is marked.
func (m *nodeMarks) start(n int) {
	if len(m.stamp) != n {
		m.stamp, m.val, m.cur = make([]uint32, n), make([]int32, n), 0
	}
	m.cur++
	if m.cur == 0 { // wrapped: old stamps could match
		clear(m.stamp)
		m.cur = 1
	}
}

// get is node i's value, if marked in this pass.
func (m *nodeMarks) get(i int) (int32, bool) {
	if m.stamp[i] == m.cur {
		return m.val[i], true
	}
	return 0, false
}

// set marks node i with v.
func (m *nodeMarks) set(i int, v int32) { m.stamp[i], m.val[i] = m.cur, v }

// markUsed marks the GPUs of refs (a new gang's slots, resolved) as each
// node's GPU positions as bits (c.used), for usesMarked; false, marking
// nothing usable, when a slot did not resolve or its GPU is past the 32nd
// of its node. A preemption's settle built a map of the new gang's GPUs
// by name.
func (c *Capacity) markUsed(refs []slotRef) bool {
	c.used.start(len(c.Nodes))
	for _, rf := range refs {
		if rf.g == nil {
			return false
		}
		k := c.gpuPos(rf.g, rf.ni)
		if k >= 32 {
			return false
		}
		bits, _ := c.used.get(rf.ni)
		c.used.set(rf.ni, bits|1<<k)
	}
	return true
}

// usesMarked reports whether any resolved slot (g not nil) is on a GPU
// markUsed marked.
func (c *Capacity) usesMarked(refs []slotRef) bool {
	for _, rf := range refs {
		if rf.g == nil {
			continue
		}
		if bits, ok := c.used.get(rf.ni); ok && bits&(1<<c.gpuPos(rf.g, rf.ni)) != 0 {
			return true
		}
	}
	return false
}

// gpuPos is g's position among node ni's GPUs.
func (c *Capacity) gpuPos(g *FreeGPU, ni int) int {
	gs := c.Nodes[ni].GPUs
	for k := range gs {
		if &gs[k] == g {
			return k
		}
	}
	return len(gs)
}
