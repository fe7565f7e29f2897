package policy

// genTrack remembers which cluster (its Nodes and Gen storage) a Capacity
// was last reset from, each node's Gen then, and which nodes the round
// since has changed, so the next Reset can skip every node that is
// unchanged on both sides.
type genTrack struct {
	nodes   *Node   // &Nodes[0] of the tracked cluster; nil = not tracking
	gen     *uint64 // &Gen[0] of the tracked cluster
	last    []uint64
	touched []bool
}

// follows reports whether c is the tracked cluster: the same node and Gen
// storage, one counter per node.
func (t *genTrack) follows(c *Cluster) bool {
	return t.nodes != nil && len(c.Nodes) > 0 && len(c.Gen) == len(c.Nodes) &&
		len(t.last) == len(c.Nodes) && t.nodes == &c.Nodes[0] && t.gen == &c.Gen[0]
}

// stale reports whether node i must be re-read: its Gen moved or the
// last round changed it.
func (t *genTrack) stale(c *Cluster, i int) bool {
	return t.touched[i] || c.Gen[i] != t.last[i]
}

// remember records c's counters after a Reset from it (n = node count);
// an untracked c stops tracking.
func (t *genTrack) remember(c *Cluster, n int) {
	if cap(t.touched) < n {
		t.touched = make([]bool, n)
	}
	t.touched = t.touched[:n]
	clear(t.touched)
	if len(c.Nodes) == 0 || len(c.Gen) != len(c.Nodes) || len(c.Nodes) != n {
		t.nodes, t.gen, t.last = nil, nil, t.last[:0]
		return
	}
	t.nodes, t.gen = &c.Nodes[0], &c.Gen[0]
	t.last = append(t.last[:0], c.Gen...)
}

// touch marks node i changed by the round in progress.
func (t *genTrack) touch(i int) {
	if i < len(t.touched) {
		t.touched[i] = true
	}
}
