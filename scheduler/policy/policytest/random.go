package policytest

import (
	"fmt"
	"math/rand/v2"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// RandomSpec sizes a random snapshot.
type RandomSpec struct {
	Cluster ClusterSpec
	// Running and Queued are job counts; Busy (0..1) caps the share of
	// GPUs running jobs may fill.
	Running, Queued int
	Busy            float64
	// FracShare of jobs ask for a fraction of a GPU; ElasticShare are
	// elastic (Optimus).
	FracShare, ElasticShare float64
}

// Random builds a valid snapshot from a seed: running jobs are placed
// first-fit on real free capacity and charged to the GPUs, queued jobs
// have random gangs (some larger than the cluster), service and progress.
func Random(seed uint64, sp RandomSpec) *policy.Snapshot {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	cl := Cluster(sp.Cluster)
	s := &policy.Snapshot{Now: 100000, Cluster: cl}
	gpus := sp.Cluster.Racks * sp.Cluster.NodesPerRack * sp.Cluster.GPUsPerNode
	used := 0.0
	for i := 0; i < sp.Running && used < sp.Busy*float64(gpus); i++ {
		j := randomJob(rng, fmt.Sprintf("run%d", i), sp, s.Now)
		if p, ok := firstFit(&s.Cluster, j); ok {
			j.LastStart = s.Now - j.Executed
			Run(&s.Cluster, j, p)
			used += float64(len(p.Slots)) * j.Fraction
			s.Jobs = append(s.Jobs, j)
		}
	}
	for i := 0; i < sp.Queued; i++ {
		j := randomJob(rng, fmt.Sprintf("q%d", i), sp, s.Now)
		if rng.IntN(200) == 0 {
			j.Workers = gpus + 1 // can never fit
		}
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

var gangSizes = []int{1, 1, 1, 1, 2, 2, 4, 4, 8, 16}

func randomJob(rng *rand.Rand, id string, sp RandomSpec, now float64) *policy.Job {
	j := &policy.Job{ID: id, User: fmt.Sprintf("u%d", rng.IntN(20)), Model: fmt.Sprintf("m%d", rng.IntN(7)),
		Submit: now - rng.Float64()*50000, State: policy.Queued, Fraction: 1, MemMiB: 0}
	j.QueuedSince = j.Submit + rng.Float64()*(now-j.Submit)
	j.Workers = gangSizes[rng.IntN(len(gangSizes))]
	if rng.Float64() < sp.FracShare {
		j.Workers, j.Fraction, j.MemMiB = 1, []float64{0.25, 0.5, 0.75}[rng.IntN(3)], int64(1024*(1+rng.IntN(6)))
	}
	if rng.Float64() < sp.ElasticShare {
		j.MinWorkers, j.MaxWorkers = 1, j.Workers*2
	}
	j.Executed = rng.ExpFloat64() * 2000
	j.Attained = j.Executed * float64(j.Workers) * j.Fraction
	j.OracleDuration = j.Executed + rng.ExpFloat64()*5000
	j.Util = []float64{0, 0.2, 0.5, 0.9}[rng.IntN(4)]
	j.Features = policy.ModelFeatures{ParamsM: rng.Float64() * 300, GFLOPsPerSamp: rng.Float64() * 50, BatchSize: 32}
	j.StepTimes = map[int]policy.Seconds{j.Workers: 0.1 + rng.Float64()}
	if rng.IntN(3) == 0 {
		j.TargetLoss = 0.5
		for k := 0; k < 6; k++ {
			st := float64(k * 100)
			j.Progress = append(j.Progress, policy.ProgressPoint{Step: st, Loss: 1/(0.001*st+0.5) + 0.3})
		}
	}
	return j
}

// firstFit finds slots for j on the cluster's free GPUs, or fails.
func firstFit(c *policy.Cluster, j *policy.Job) (policy.Placement, bool) {
	var p policy.Placement
	for _, n := range c.Nodes {
		for _, g := range n.GPUs {
			if len(p.Slots) == j.Workers {
				return p, true
			}
			mem := j.MemMiB
			if j.Fraction >= 1 {
				mem = g.MemoryMiB
			}
			if 1-g.UsedFraction >= j.Fraction-1e-9 && g.MemoryMiB-g.UsedMemoryMiB >= mem {
				p.Slots = append(p.Slots, policy.Slot{Node: n.Name, GPU: g.Index, Fraction: j.Fraction, MemMiB: mem})
			}
		}
	}
	return p, len(p.Slots) == j.Workers
}

// Clone deep-copies a snapshot so tests can check it was not mutated.
func Clone(s *policy.Snapshot) *policy.Snapshot {
	c := *s
	c.Cluster.Nodes = make([]policy.Node, len(s.Cluster.Nodes))
	for i, n := range s.Cluster.Nodes {
		n.GPUs = append([]policy.GPU(nil), n.GPUs...)
		c.Cluster.Nodes[i] = n
	}
	c.Jobs = make([]*policy.Job, len(s.Jobs))
	for i, j := range s.Jobs {
		cj := *j
		cj.Placement.Slots = append([]policy.Slot(nil), j.Placement.Slots...)
		cj.Progress = append([]policy.ProgressPoint(nil), j.Progress...)
		cj.StepTimes = map[int]policy.Seconds{}
		for k, v := range j.StepTimes {
			cj.StepTimes[k] = v
		}
		c.Jobs[i] = &cj
	}
	return &c
}
