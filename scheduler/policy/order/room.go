package order

// Between decisions (policy.Idler) the change-ranked orderings give the
// buffers they size by the job count room for the count they last saw
// and a little more, so that a count creeping past a buffer's capacity
// regrows it there rather than inside the next decision: at 10,000
// nodes, srtf-oracle's merge buffer (32 bytes a job) regrew inside a
// live round at 121,858 jobs, 958 fresh pages and ~6 ms on a 7 ms
// decision. The room is n/64 past the count, and a regrowth leaves n/8.
const (
	roomLeft = 64
	roomMade = 8
)

// roomFor is xs with room for n + n/roomLeft elements. Where it has
// less, it is a copy (its contents kept) with room for n + n/roomMade,
// every element up to n written so that the decision that fills it
// meets no fresh page.
func roomFor[T any](xs []T, n int) []T {
	if cap(xs) >= n+n/roomLeft {
		return xs
	}
	ys := make([]T, max(len(xs), n), n+n/roomMade)
	copy(ys, xs)
	clear(ys[len(xs):])
	return ys[:len(xs)]
}

// idle readies changeState's buffers for n jobs.
func (c *changeState) idle(n int) {
	c.gen, c.mark, c.at = roomFor(c.gen, n), roomFor(c.mark, n), roomFor(c.at, n)
	c.prev, c.dropAt, c.olr = roomFor(c.prev, n), roomFor(c.dropAt, n), roomFor(c.olr, n)
}

// idle readies changeRanks' buffers for as many jobs as its last call.
func (t *changeRanks) idle() {
	n := len(t.gen)
	t.changeState.idle(n)
	t.key, t.id, t.sub = roomFor(t.key, n), roomFor(t.id, n), roomFor(t.sub, n)
	t.accr, t.acc, t.until = roomFor(t.accr, n), roomFor(t.acc, n), roomFor(t.until, n)
	t.ord, t.next, t.out = roomFor(t.ord, n), roomFor(t.next, n), roomFor(t.out, n)
	t.slot = roomFor(t.slot, n)
}

// idle readies submitRanks' buffers for as many jobs as its last call.
func (t *submitRanks) idle() {
	n := len(t.gen)
	t.changeState.idle(n)
	t.last = roomFor(t.last, n)
	t.ord, t.next, t.out = roomFor(t.ord, n), roomFor(t.next, n), roomFor(t.out, n)
}

// Idle readies the buffers a ranking by changes sizes by the job count
// for the next decision (policy.Idler); it changes no ranking.
func (o *SRTFOracle) Idle() { o.cr.t.idle() }

// Idle readies LAS' buffers as SRTFOracle's.
func (o *LAS) Idle() { o.cr.t.idle() }

// Idle readies the buffers FIFO's ranking by changes sizes by the job
// count (policy.Idler).
func (o *FIFO) Idle() { o.tr.idle() }
