package tune

import (
	"fmt"
	"math"
	"strconv"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/fluid"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// SimConfig is one tuning simulation: every workload is one tuning job
// (group) over its measured batch sizes, all submitted at t = 0.
type SimConfig struct {
	GPUs, PerNode int
	Algorithm     string  // sha, asha, hyperband, random, grid
	Reduction     float64 // η (default 3)
	Rungs         int     // successive-halving rungs (default 3)
	Mode          fluid.Mode
	// StartLatency is seconds a (re)started trial holds its GPUs before it
	// progresses (process start, checkpoint reload; default 10).
	StartLatency float64
	GPUMemMiB    int64 // default 16,000
	TrialMemMiB  int64 // default 2,000
	// FromScratch retrains a promoted trial from step 0 to its new
	// budget, as a tuner without checkpoint hand-over must. By default a
	// promoted trial resumes its previous rung's checkpoint (in every
	// mode, baselines included: like is compared with like).
	FromScratch bool
}

// SimResult is what a tuning run cost and found.
type SimResult struct {
	Makespan float64 // seconds until every tuning job finished
	GPUHours float64 // GPUs with any trial on them, integrated
	Restarts int     // trial starts beyond the first of each run
	// Iterations is the training steps every trial ran, summed: resume
	// trains each step once, from-scratch promotion re-trains them.
	Iterations float64
	Best       map[string]SimBest
}

// SimBest is one tuning job's answer.
type SimBest struct {
	Batch  int
	Metric float64
}

type simTrial struct {
	w      *Workload
	tuner  *Tuner
	id     int
	batch  int
	job    *policy.Job
	done   float64 // iterations trained
	target float64 // iterations at the end of the current rung
	hold   float64 // start latency left, seconds
}

type sim struct {
	cfg    SimConfig
	pol    policy.Policy
	now    float64
	active map[string]*simTrial
	order  []string
	res    SimResult
}

// Simulate runs the tuning jobs on a cluster of cfg.GPUs under the fluid
// policy in cfg.Mode (fluid, or a baseline).
func Simulate(ws []*Workload, cfg SimConfig) (SimResult, error) {
	cfg = simDefaults(cfg)
	pol, err := registry.New("fluid", registry.Config{Fluid: fluid.Config{Mode: cfg.Mode}})
	if err != nil {
		return SimResult{}, err
	}
	s := &sim{cfg: cfg, pol: pol, active: map[string]*simTrial{}, res: SimResult{Best: map[string]SimBest{}}}
	tuners := make([]*Tuner, len(ws))
	for i, w := range ws {
		if tuners[i], err = NewTuner(simSpec(w, cfg)); err != nil {
			return SimResult{}, err
		}
	}
	for step := 0; ; step++ {
		if step > 1_000_000 {
			return s.res, fmt.Errorf("tuning simulation did not finish")
		}
		finished := true
		for i, t := range tuners {
			s.apply(ws[i], t, t.Next())
			finished = finished && t.Finished()
		}
		if finished {
			break
		}
		if err := s.decide(); err != nil {
			return s.res, err
		}
		if err := s.advance(); err != nil {
			return s.res, err
		}
	}
	for i, t := range tuners {
		if b, ok := t.Best(); ok {
			batch, _ := strconv.Atoi(b.Config["batch"])
			s.res.Best[ws[i].Model] = SimBest{Batch: batch, Metric: b.Last()}
		}
	}
	s.res.Makespan = s.now
	return s.res, nil
}

func simDefaults(c SimConfig) SimConfig {
	if c.PerNode <= 0 {
		c.PerNode = min(max(c.GPUs, 1), 4)
	}
	if c.Reduction == 0 {
		c.Reduction = 3
	}
	if c.Rungs <= 0 {
		c.Rungs = 3
	}
	if c.StartLatency == 0 {
		c.StartLatency = 10
	}
	if c.GPUMemMiB == 0 {
		c.GPUMemMiB = 16000
	}
	if c.TrialMemMiB == 0 {
		c.TrialMemMiB = 2000
	}
	return c
}

// simSpec is a workload's tuning spec: the batch sizes as a grid, budgets
// in epochs of 1/(η^(rungs−1)) of the samples every curve covers.
func simSpec(w *Workload, cfg SimConfig) Spec {
	vals := make([]string, len(w.Batches))
	for i, b := range w.Batches {
		vals[i] = strconv.Itoa(b)
	}
	top := math.Pow(cfg.Reduction, float64(cfg.Rungs-1))
	mode := "min"
	if w.Maximize {
		mode = "max"
	}
	return Spec{Name: w.Model, Metric: "metric", Mode: mode, Algorithm: cfg.Algorithm, Sampler: "grid",
		Budget: Budget{Unit: "epochs", Min: 1, Max: top, Reduction: cfg.Reduction},
		Params: []Param{{Name: "batch", Type: ParamChoice, Values: vals}}}
}

// apply turns tuner actions into trial jobs (run) or drops them (stop).
func (s *sim) apply(w *Workload, t *Tuner, acts []Action) {
	epoch := w.Samples / t.Spec.Budget.Max
	for _, a := range acts {
		key := w.Model + "/" + strconv.Itoa(a.Trial)
		if a.Op == "stop" {
			delete(s.active, key)
			continue
		}
		batch, _ := strconv.Atoi(t.Trials[a.Trial].Config["batch"])
		st := &simTrial{w: w, tuner: t, id: a.Trial, batch: batch, target: a.Budget * epoch / float64(batch)}
		if prev := t.Trials[a.Trial].Metrics; len(prev) > 0 && !s.cfg.FromScratch {
			st.done = t.RungBudget(t.Trials[a.Trial].Bracket, a.Rung-1) * epoch / float64(batch)
		}
		st.job = &policy.Job{ID: key, Group: w.Model, Model: w.Model, Submit: s.now, State: policy.Queued,
			Workers: 1, Fraction: 1, MinWorkers: 1, MaxWorkers: 16, MemMiB: s.trialMem(w, batch),
			Util: w.Util(batch), StepTimes: map[int]policy.Seconds{}}
		for n := 1; n <= 16; n++ {
			st.job.StepTimes[n] = w.StepTime(batch, n)
		}
		s.active[key] = st
		s.order = append(s.order, key)
	}
}

// trialMem is a trial's GPU memory: its micro-batch's share of the GPU
// (MemShare), at least TrialMemMiB, so a trial at the largest local batch
// that fits a GPU is never packed with another.
func (s *sim) trialMem(w *Workload, batch int) int64 {
	return max(s.cfg.TrialMemMiB, int64(w.MemShare(batch)*float64(s.cfg.GPUMemMiB)))
}

// decide asks the policy and applies its decision.
func (s *sim) decide() error {
	snap := &policy.Snapshot{Now: s.now, Cluster: s.cluster(), SkipReasons: true}
	live := s.order[:0]
	for _, k := range s.order {
		if st, ok := s.active[k]; ok {
			st.job.StepsLeft = st.target - st.done
			snap.Jobs = append(snap.Jobs, st.job)
			live = append(live, k)
		}
	}
	s.order = live
	d := s.pol.Decide(snap)
	for _, id := range d.Preempts {
		if st := s.active[id]; st != nil {
			st.job.State, st.job.Placement = policy.Queued, policy.Placement{}
		}
	}
	for _, start := range d.Starts {
		st := s.active[start.JobID]
		if st == nil {
			return fmt.Errorf("policy started unknown trial %s", start.JobID)
		}
		if st.job.State == policy.Running || st.done > 0 {
			s.res.Restarts++
		}
		st.job.State, st.job.Placement, st.hold = policy.Running, start.Placement, s.cfg.StartLatency
	}
	return s.check()
}

// cluster is the GPUs with the running trials' shares on them.
func (s *sim) cluster() policy.Cluster {
	var c policy.Cluster
	for g := 0; g < s.cfg.GPUs; g++ {
		if g%s.cfg.PerNode == 0 {
			c.Nodes = append(c.Nodes, policy.Node{Name: fmt.Sprint("n", g/s.cfg.PerNode), Rack: "r"})
		}
		n := &c.Nodes[len(c.Nodes)-1]
		n.GPUs = append(n.GPUs, policy.GPU{Index: len(n.GPUs), MemoryMiB: s.cfg.GPUMemMiB})
	}
	for _, st := range s.active {
		if st.job.State != policy.Running {
			continue
		}
		for _, sl := range st.job.Placement.Slots {
			g := &c.Nodes[nodeIndex(sl.Node)].GPUs[sl.GPU]
			g.UsedFraction += sl.Fraction
			g.UsedMemoryMiB += sl.MemMiB
		}
	}
	return c
}

func nodeIndex(name string) int {
	i, _ := strconv.Atoi(name[1:])
	return i
}

// check is the simulator's guard: no GPU over its fraction or memory.
func (s *sim) check() error {
	for _, n := range s.cluster().Nodes {
		for _, g := range n.GPUs {
			if g.UsedFraction > 1+1e-9 || g.UsedMemoryMiB > g.MemoryMiB {
				return fmt.Errorf("t=%.0f: %s GPU %d over-committed (fraction %.3f, memory %d)", s.now, n.Name, g.Index, g.UsedFraction, g.UsedMemoryMiB)
			}
		}
	}
	return nil
}
