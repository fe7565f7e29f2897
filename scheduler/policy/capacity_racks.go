package policy

// rackIndex lists each rack's nodes in node order and counts its GPUs,
// so a placer that works rack by rack (yarn) reads only that rack's
// nodes: scanning every node once per rack was 250 passes over 10,000
// nodes for each wide gang. A Capacity's nodes and racks never change
// (Reset makes a new Capacity when the cluster lists other nodes), so
// NewCapacity builds it once.
type rackIndex struct {
	at   []int32 // node indexes, rack after rack
	off  []int   // rack r's nodes are at[off[r]:off[r+1]]
	gpus []int   // each rack's GPUs
}

// indexRacks is one counting pass over the nodes.
func (c *Capacity) indexRacks() {
	x := rackIndex{at: make([]int32, len(c.Nodes)), off: make([]int, len(c.Racks)+1), gpus: make([]int, len(c.Racks))}
	for i := range c.Nodes {
		r := c.Nodes[i].RackID
		x.off[r+1]++
		x.gpus[r] += len(c.Nodes[i].GPUs)
	}
	for r := range c.Racks {
		x.off[r+1] += x.off[r]
	}
	next := make([]int, len(c.Racks))
	copy(next, x.off)
	for i := range c.Nodes {
		r := c.Nodes[i].RackID
		x.at[next[r]] = int32(i)
		next[r]++
	}
	c.racks = x
}

// RackNodes lists rack r's node indexes (into Nodes), in node order. The
// slice is the Capacity's: do not change it.
func (c *Capacity) RackNodes(r int) []int32 {
	return c.racks.at[c.racks.off[r]:c.racks.off[r+1]:c.racks.off[r+1]]
}

// RackGPUs is how many GPUs rack r's nodes have.
func (c *Capacity) RackGPUs(r int) int { return c.racks.gpus[r] }
