package sim

import (
	"math/rand/v2"
	"sort"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// testFIFO starts queued jobs in submit order, first-fit, stopping at the
// first that does not fit (strict FIFO). spread places one worker per node.
type testFIFO struct {
	spread bool
}

func (p *testFIFO) Name() string { return "test-fifo" }

func (p *testFIFO) Decide(s *policy.Snapshot) policy.Decision {
	free := newFreeMap(s.Cluster)
	var d policy.Decision
	for _, j := range s.Jobs {
		if j.State != policy.Queued {
			continue
		}
		pl, ok := free.place(j, j.Workers, p.spread)
		if !ok {
			break
		}
		d.Starts = append(d.Starts, policy.Start{JobID: j.ID, Placement: pl})
	}
	return d
}

// freeMap tracks free fractions per GPU during one decision.
type freeMap struct {
	nodes []string
	free  [][]float64
}

func newFreeMap(c policy.Cluster) *freeMap {
	f := &freeMap{}
	for _, n := range c.Nodes {
		f.nodes = append(f.nodes, n.Name)
		row := make([]float64, len(n.GPUs))
		for i, g := range n.GPUs {
			row[i] = 1 - g.UsedFraction
		}
		f.free = append(f.free, row)
	}
	return f
}

// place finds workers slots of the job's fraction: packed (first fit) or
// spread (one per node round-robin). All-or-nothing.
func (f *freeMap) place(j *policy.Job, workers int, spread bool) (policy.Placement, bool) {
	frac := j.Fraction
	var slots []policy.Slot
	take := func(ni, gi int) {
		f.free[ni][gi] -= frac
		slots = append(slots, policy.Slot{Node: f.nodes[ni], GPU: gi, Fraction: frac})
	}
	if spread {
		for pass := 0; pass < 16 && len(slots) < workers; pass++ {
			for ni := range f.free {
				for gi := range f.free[ni] {
					if len(slots) < workers && f.free[ni][gi] >= frac-1e-9 {
						take(ni, gi)
						break
					}
				}
			}
		}
	} else {
		for ni := range f.free {
			for gi := range f.free[ni] {
				for len(slots) < workers && f.free[ni][gi] >= frac-1e-9 {
					take(ni, gi)
				}
			}
		}
	}
	if len(slots) < workers {
		for _, s := range slots {
			f.free[f.index(s.Node)][s.GPU] += frac
		}
		return policy.Placement{}, false
	}
	return policy.Placement{Slots: slots}, true
}

func (f *freeMap) index(node string) int {
	for i, n := range f.nodes {
		if n == node {
			return i
		}
	}
	return -1
}

// testChaos is a deterministic but erratic policy for invariant testing:
// it preempts random running jobs, then starts queued ones in least
// attained service order with random packing or spreading and, for elastic
// jobs, random worker counts.
type testChaos struct {
	rng *rand.Rand
}

func (p *testChaos) Name() string { return "test-chaos" }

func (p *testChaos) Decide(s *policy.Snapshot) policy.Decision {
	var d policy.Decision
	preempted := map[string]bool{}
	for _, j := range s.Jobs {
		if j.State == policy.Running && p.rng.IntN(4) == 0 {
			d.Preempts = append(d.Preempts, j.ID)
			preempted[j.ID] = true
		}
	}
	free := newFreeMap(s.Cluster)
	for _, j := range s.Jobs {
		if preempted[j.ID] {
			for _, sl := range j.Placement.Slots {
				free.free[free.index(sl.Node)][sl.GPU] += sl.Fraction
			}
		}
	}
	queued := []*policy.Job{}
	for _, j := range s.Jobs {
		if j.State == policy.Queued || preempted[j.ID] {
			queued = append(queued, j)
		}
	}
	sort.SliceStable(queued, func(a, b int) bool { return queued[a].Attained < queued[b].Attained })
	for _, j := range queued {
		w := j.Workers
		if j.MaxWorkers > 0 {
			w = j.MinWorkers + p.rng.IntN(j.MaxWorkers-j.MinWorkers+1)
		}
		if pl, ok := free.place(j, w, p.rng.IntN(2) == 0); ok {
			d.Starts = append(d.Starts, policy.Start{JobID: j.ID, Placement: pl})
		}
	}
	return d
}

// overAllocator puts every queued job on GPU 0 of the first node.
type overAllocator struct{}

func (overAllocator) Name() string { return "over" }
func (overAllocator) Decide(s *policy.Snapshot) policy.Decision {
	var d policy.Decision
	for _, j := range s.Jobs {
		if j.State == policy.Queued {
			d.Starts = append(d.Starts, policy.Start{JobID: j.ID, Placement: policy.Placement{Slots: []policy.Slot{{Node: s.Cluster.Nodes[0].Name, GPU: 0, Fraction: 1}}}})
		}
	}
	return d
}

// badPreempter preempts a job that is not running.
type badPreempter struct{}

func (badPreempter) Name() string { return "bad-preempt" }
func (badPreempter) Decide(s *policy.Snapshot) policy.Decision {
	return policy.Decision{Preempts: []string{s.Jobs[0].ID}}
}

// neverStarts never starts anything.
type neverStarts struct{}

func (neverStarts) Name() string                            { return "never" }
func (neverStarts) Decide(*policy.Snapshot) policy.Decision { return policy.Decision{} }

type (
	policySnapshot = policy.Snapshot
	policyDecision = policy.Decision
)
