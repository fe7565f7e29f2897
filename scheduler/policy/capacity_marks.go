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
