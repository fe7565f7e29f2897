package policy

// sumDefer lets a run of releases and re-commits summarise each node
// they touch once, at the end, instead of once per job: a lazy trial
// materialises and later re-commits many victims on the same nodes
// (lucid's mass preemption at 10,000 nodes: ~168,000 slot releases over
// ~69,000 distinct nodes, 2D-Gittins' ~4 per node), and re-summarising a
// node reads all its GPUs.
//
// Only exact runs defer (a lazy trial's victims, under roundTrips'
// terms): a node's summary is recomputed from its GPUs, the same at the
// end whenever it is taken, and the cluster's FreeSum, moved by each
// node's old and new sum, is a sum of dyadic values, the same bit for
// bit in any order. Nothing in the run reads a summary or a total.
type sumDefer struct {
	on    bool
	marks nodeMarks
	nodes []int
}

// deferSums starts a run whose nodes apply leaves unsummarised.
func (c *Capacity) deferSums() {
	c.deferred.on = true
	c.deferred.marks.start(len(c.Nodes))
	c.deferred.nodes = c.deferred.nodes[:0]
}

// touchedSum is apply's summary of node i: now, or at the end of a
// deferred run.
func (c *Capacity) touchedSum(i int) {
	d := &c.deferred
	if !d.on {
		c.resummarise(i)
		return
	}
	if _, seen := d.marks.get(i); !seen {
		d.marks.set(i, 0)
		d.nodes = append(d.nodes, i)
	}
}

// resumeSums ends a deferred run, summarising its nodes in the order
// they were first touched.
func (c *Capacity) resumeSums() {
	d := &c.deferred
	d.on = false
	for _, i := range d.nodes {
		c.resummarise(i)
	}
	d.nodes = d.nodes[:0]
}
