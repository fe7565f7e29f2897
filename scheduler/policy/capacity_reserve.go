package policy

// A giant gang's slots are megabytes: 80,001 slots of 40 bytes are 3.2
// MB, ~780 pages. Where the heap has no free span that large it takes
// fresh pages from the system, which the runtime knows are zero and does
// not clear, so every page faults when the placer first writes it: ~0.5
// ms of a 2D-LAS or 2D-Gittins decision that swaps giants at 10,000
// nodes. The Capacity keeps spare slot slices as large as the largest
// gang it wrote, as many as the most giants one decision asked for,
// faulted in between decisions (Idle), and a new giant takes one. A
// gang's slots are its Placement's, handed to the caller with the
// Decision: a spare is given away, never reused.

// reserveMin is the fewest slots (640 KB) a gang must have to take the
// reserve: smaller ones come from the heap's free spans.
const reserveMin = 16384

// maxSpares bounds the reserve: a 2D-Gittins decision that swaps giants
// places two (a trial's and the start's).
const maxSpares = 4

// pageSlots is how many slots one 4 KiB page holds, at least.
const pageSlots = 4096 / 40

// slotReserve is the Capacity's pre-faulted slots for its next giants.
type slotReserve struct {
	spares [][]Slot // each zero, every page written
	// want is the largest gang (slots, with room) asked for since the
	// Capacity was made: the size Idle makes a spare; asked counts the
	// giants asked for since the last Idle, most the largest such count
	want, asked, most int
	// taken counts the gangs that took a spare (tests)
	taken int
}

// gangSlots returns storage for a gang of n slots with room for m: a
// spare where the gang is a giant and a spare fits it (at most twice its
// size, so little is held past it), else a fresh slice.
func (c *Capacity) gangSlots(n, m int) []Slot {
	if m < reserveMin {
		return make([]Slot, n, m)
	}
	r := &c.reserve
	r.want = max(r.want, m)
	r.asked++
	r.most = min(max(r.most, r.asked), maxSpares)
	for i, s := range r.spares {
		if cap(s) >= m && cap(s) <= 2*m {
			last := len(r.spares) - 1
			r.spares[i], r.spares[last] = r.spares[last], nil
			r.spares = r.spares[:last]
			r.taken++
			return s[:n:m]
		}
	}
	return make([]Slot, n, m)
}

// Idle readies the reserve for the next decision, between decisions: as
// many spares as the most giants one decision asked for, each as large
// as the largest gang asked for, every page written once so the next
// giants' placer meets no page fault; and the placer's memo, where it is
// a MemoIdler. It changes no decision.
func (c *Capacity) Idle() {
	if m, ok := c.memo.(MemoIdler); ok {
		m.Idle(c)
	}
	r := &c.reserve
	r.asked = 0
	for i, s := range r.spares {
		if cap(s) < r.want {
			r.spares[i] = faulted(r.want) // a larger giant came since
		}
	}
	for len(r.spares) < r.most {
		r.spares = append(r.spares, faulted(r.want))
	}
}

// faulted is a zero slice of n slots whose every page has been written.
func faulted(n int) []Slot {
	s := make([]Slot, n)
	for i := 0; i < len(s); i += pageSlots {
		s[i] = Slot{} // the runtime did not clear fresh pages: fault them in
	}
	return s
}
