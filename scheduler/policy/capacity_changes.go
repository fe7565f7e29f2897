package policy

// changeLog lists, in order, the nodes whose free capacity changed, so a
// placer can bring a memo of a failed search up to date by re-reading
// only those nodes instead of scanning every node again (a preemption
// trial releases a few victims between placement attempts over 10,000
// nodes). Only a Framework's Capacity logs (LogChanges): one built by
// hand may be edited through its exported fields, which no log sees.
type changeLog struct {
	on    bool
	gen   uint64 // bumped whenever the log restarts: every mark is void
	nodes []int32
}

// ChangeMark is a point in a Capacity's change history.
type ChangeMark struct {
	gen uint64
	n   int
}

// LogChanges starts logging changed nodes (until the next Reset, which
// keeps logging on).
func (c *Capacity) LogChanges() {
	if !c.changes.on {
		c.changes.on = true
		c.restartLog()
	}
}

// restartLog voids every mark handed out so far.
func (c *Capacity) restartLog() {
	c.changes.gen++
	c.changes.nodes = c.changes.nodes[:0]
}

// Mark is the current point of the change history; ok is false when the
// Capacity does not log its changes.
func (c *Capacity) Mark() (m ChangeMark, ok bool) {
	return ChangeMark{gen: c.changes.gen, n: len(c.changes.nodes)}, c.changes.on
}

// ChangedSince lists the nodes changed since m, possibly repeated; ok is
// false when m is void (the Capacity was reset or its log restarted):
// every node may have changed.
func (c *Capacity) ChangedSince(m ChangeMark) (nodes []int32, ok bool) {
	if !c.changes.on || m.gen != c.changes.gen || m.n > len(c.changes.nodes) {
		return nil, false
	}
	return c.changes.nodes[m.n:], true
}

// PlacerMemo is what the placer last stored on this Capacity (nil if
// none): a placer's own memo, checked against ChangedSince before use.
func (c *Capacity) PlacerMemo() any { return c.memo }

// SetPlacerMemo stores a placer's memo on this Capacity.
func (c *Capacity) SetPlacerMemo(m any) { c.memo = m }

// MemoIdler is a placer memo that readies itself between decisions:
// Capacity.Idle calls it, and it may catch up on the change log there
// rather than in the next decision's placer. It changes no decision.
type MemoIdler interface {
	Idle(c *Capacity)
}

// logChange records that node i changed.
func (c *Capacity) logChange(i int) {
	if !c.changes.on {
		return
	}
	if len(c.changes.nodes) >= 16*len(c.Nodes)+1024 {
		c.restartLog() // bounded: memos rebuild with one full scan
	}
	c.changes.nodes = append(c.changes.nodes, int32(i))
}
