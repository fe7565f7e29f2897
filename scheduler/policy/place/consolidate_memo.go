package place

import "github.com/caravan-dl/caravan/scheduler/policy"

// fitMemos holds a fitMemo per demand, for the few demands (gang shapes)
// a round retries; past maxMemos the oldest is reused.
type fitMemos struct {
	byDemand map[policy.Demand]*fitMemo
	order    []*fitMemo
	next     int
}

// maxMemos bounds the memos kept per Capacity (each is 4 B per node).
const maxMemos = 16

// fitMemo remembers, for one demand, a failed consolidate: how many
// workers each node hosts (nodeFit) and their total. consolidate fails
// exactly when the nodes host fewer workers than the gang has in total (a
// node that hosts the whole gang makes the total enough), and nodeFit is
// a per-node fact: after releases (a preemption trial) only the changed
// nodes are re-read, where the full search scanned every node. The text
// is noRoom of that total, as the full search words it.
type fitMemo struct {
	ok    bool
	d     policy.Demand
	mark  policy.ChangeMark
	fit   []int32 // nodeFit of each node
	total int
}

// memoFailure answers consolidate from the memo when the gang still cannot
// be placed; ok is false when the full search must run.
func memoFailure(c *policy.Capacity, d policy.Demand) (why string, ok bool) {
	ms, _ := c.PlacerMemo().(*fitMemos)
	if ms == nil {
		return "", false
	}
	m := ms.byDemand[d]
	if m == nil || !m.ok || len(m.fit) != len(c.Nodes) {
		return "", false
	}
	changed, ok := c.ChangedSince(m.mark)
	if !ok || len(changed) > len(c.Nodes) { // a full search costs less
		m.ok = false
		return "", false
	}
	for _, ni := range changed {
		f := nodeFit(&c.Nodes[ni], d)
		m.total += f - int(m.fit[ni])
		m.fit[ni] = int32(f)
	}
	m.mark, _ = c.Mark()
	if m.total >= d.Workers {
		m.ok = false // a node or a set of nodes may host it: search
		return "", false
	}
	return noRoom(d, m.total), true
}

// rememberFailure records a failed full search (cs: its candidates).
func rememberFailure(c *policy.Capacity, d policy.Demand, cs []candidate, total int) {
	mark, logged := c.Mark()
	if !logged {
		return
	}
	ms, _ := c.PlacerMemo().(*fitMemos)
	if ms == nil {
		ms = &fitMemos{byDemand: map[policy.Demand]*fitMemo{}}
		c.SetPlacerMemo(ms)
	}
	m := ms.slot(d)
	if cap(m.fit) < len(c.Nodes) {
		m.fit = make([]int32, len(c.Nodes))
	}
	m.fit = m.fit[:len(c.Nodes)]
	clear(m.fit)
	for _, cd := range cs {
		m.fit[cd.node] = int32(cd.fit)
	}
	m.ok, m.d, m.mark, m.total = true, d, mark, total
}

// slot is d's memo, taking the oldest one's place when all are in use.
func (ms *fitMemos) slot(d policy.Demand) *fitMemo {
	if m := ms.byDemand[d]; m != nil {
		return m
	}
	var m *fitMemo
	if len(ms.order) < maxMemos {
		m = &fitMemo{}
		ms.order = append(ms.order, m)
	} else {
		m = ms.order[ms.next]
		ms.next = (ms.next + 1) % maxMemos
		delete(ms.byDemand, m.d)
	}
	ms.byDemand[d] = m
	return m
}
