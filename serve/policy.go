package serve

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Item is a queued request as a policy sees it.
type Item struct {
	Seq      uint64 // arrival order
	Arrival  time.Time
	Deadline time.Time
	In, Out  int // input tokens, output tokens (0 for models without them)
}

// Decision is what a policy wants done now, as indexes into the queue it was
// given: Batch goes to the idle worker (empty: dispatch nothing yet), Drop
// are answered at once because they can no longer meet their deadlines.
type Decision struct {
	Batch []int
	Drop  []int
}

// Policy chooses the next batch. Policies are pure: the same queue,
// distributions and time give the same decision, live or simulated. q is in
// arrival order; wantBatch is false when no worker is idle (drops only).
type Policy interface {
	Name() string
	Decide(now time.Time, q []Item, d *Dists, wantBatch bool) Decision
}

// PolicyConfig are the knobs of every policy.
type PolicyConfig struct {
	// MaxBatch caps a batch (Orloj, Clockwork); FIFO always uses it.
	MaxBatch int
	// MinProb: Orloj drops a request whose chance of meeting its deadline,
	// even alone and dispatched now, is below this (default 0.05).
	MinProb float64
	// Anchors: Orloj builds candidate batches around this many of the most
	// urgent requests (default 8).
	Anchors int
	// Quantile is Clockwork's latency estimate per batch size (default 0.99).
	Quantile float64
}

func (c PolicyConfig) withDefaults() PolicyConfig {
	if c.MaxBatch <= 0 {
		c.MaxBatch = 16
	}
	if c.MinProb <= 0 {
		c.MinProb = 0.05
	}
	if c.Anchors <= 0 {
		c.Anchors = 8
	}
	if c.Quantile <= 0 || c.Quantile > 1 {
		c.Quantile = 0.99
	}
	return c
}

// PolicyNames lists the policies NewPolicy knows.
var PolicyNames = []string{"orloj", "clockwork", "fifo"}

// NewPolicy builds a policy by name.
func NewPolicy(name string, c PolicyConfig) (Policy, error) {
	c = c.withDefaults()
	switch name {
	case "orloj":
		return &Orloj{c: c}, nil
	case "clockwork":
		return &Clockwork{c: c}, nil
	case "fifo":
		return &FIFO{c: c}, nil
	}
	return nil, fmt.Errorf("policy %q: unknown (have %v)", name, PolicyNames)
}

// FIFO serves in arrival order with a fixed batch size; it drops only what
// is already past its deadline.
type FIFO struct{ c PolicyConfig }

func (*FIFO) Name() string { return "fifo" }

func (f *FIFO) Decide(now time.Time, q []Item, _ *Dists, wantBatch bool) Decision {
	var dec Decision
	for i := range q {
		if now.After(q[i].Deadline) {
			dec.Drop = append(dec.Drop, i)
		} else if wantBatch && len(dec.Batch) < f.c.MaxBatch {
			dec.Batch = append(dec.Batch, i)
		}
	}
	return dec
}

// Clockwork keeps one latency estimate per batch size (a high quantile of
// every batch of that size, whatever its inputs), serves earliest deadline
// first with the largest batch whose estimate meets the earliest deadline,
// and drops requests that cannot make it even alone. Like Clockwork it
// learns only from the batches it runs: once its estimate for a batch of one
// exceeds every request's slack it drops everything and never measures
// again (what it assumes away: latency that is predictable per batch size).
type Clockwork struct{ c PolicyConfig }

func (*Clockwork) Name() string { return "clockwork" }

func (cw *Clockwork) estimate(d *Dists, n int) time.Duration {
	if s := d.ByBatch(n); s != nil {
		return s.Quantile(cw.c.Quantile)
	}
	return 0
}

func (cw *Clockwork) Decide(now time.Time, q []Item, d *Dists, wantBatch bool) Decision {
	var dec Decision
	one := cw.estimate(d, 1)
	live := make([]int, 0, len(q))
	for i := range q {
		if now.Add(one).After(q[i].Deadline) {
			dec.Drop = append(dec.Drop, i)
			continue
		}
		live = append(live, i)
	}
	if !wantBatch || len(live) == 0 {
		return dec
	}
	sortEDF(q, live)
	first := q[live[0]].Deadline
	b := 1
	for n := 2; n <= min(cw.c.MaxBatch, len(live)); n++ {
		if !now.Add(cw.estimate(d, n)).After(first) {
			b = n
		}
	}
	dec.Batch = live[:b]
	return dec
}

// sortEDF orders queue indexes by deadline, then arrival.
func sortEDF(q []Item, idx []int) {
	slices.SortFunc(idx, func(a, b int) int {
		if c := q[a].Deadline.Compare(q[b].Deadline); c != 0 {
			return c
		}
		return cmp.Compare(q[a].Seq, q[b].Seq)
	})
}
