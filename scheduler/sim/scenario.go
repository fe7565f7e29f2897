package sim

import (
	"fmt"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/profile"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

// Spec describes a scenario declaratively (what the CLI flags fill in).
type Spec struct {
	Name string
	// Trace is "kind:path" (see trace.Open); VC and RoundUp filter it.
	Trace   string
	VC      string
	RoundUp bool
	// Cluster: GPUs (homogeneous, GPUsPerNode per node) wins over
	// ClusterSpec (Tiresias spec CSV), which wins over Nodes (Alibaba list).
	GPUs         int
	GPUsPerNode  int
	NodesPerRack int
	ClusterSpec  string
	Nodes        string
	// Profiles is the model-profiles directory ("" = placement-blind).
	Profiles     string
	SpreadModel  string
	AssignModels bool
	Seed         uint64
	Elastic      bool
	// MaxJobs keeps only the first N jobs (0 = all).
	MaxJobs int
	// Batch submits every job at t=0, for makespan experiments (Horus'
	// evaluation submits its job set at once); the offered load printed
	// is still the trace's own.
	Batch bool
	// SkipUnfit reports jobs larger than the cluster instead of failing.
	SkipUnfit bool
	Config    Config
}

// Load reads the trace, builds the cluster and the workload.
func (s Spec) Load() (Scenario, trace.Stats, error) {
	tr, err := trace.Open(s.Trace, trace.OpenOptions{VC: s.VC, RoundUp: s.RoundUp})
	if err != nil {
		return Scenario{}, trace.Stats{}, err
	}
	jobs := tr.Jobs
	if s.MaxJobs > 0 && len(jobs) > s.MaxJobs {
		jobs = jobs[:s.MaxJobs]
	}
	stats := trace.Summarise(jobs)
	if s.Batch {
		jobs = atZero(jobs)
	}
	c, err := s.cluster()
	if err != nil {
		return Scenario{}, trace.Stats{}, err
	}
	if !s.SkipUnfit {
		if err := trace.CheckFits(jobs, TotalGPUs(c)); err != nil {
			return Scenario{}, trace.Stats{}, fmt.Errorf("%w (use a bigger cluster, or skip-unfit to report such jobs)", err)
		}
	}
	var prof *profile.Set
	if s.Profiles != "" {
		if prof, err = profile.LoadSet(s.Profiles); err != nil {
			return Scenario{}, trace.Stats{}, err
		}
	}
	sj, err := Build(jobs, WorkloadOptions{Profiles: prof, SpreadModel: s.SpreadModel, AssignModels: s.AssignModels, Seed: s.Seed, Elastic: s.Elastic})
	if err != nil {
		return Scenario{}, trace.Stats{}, err
	}
	name := s.Name
	if name == "" {
		name = tr.Name
	}
	return Scenario{Name: name, Cluster: c, Jobs: sj, Config: s.Config}, stats, nil
}

// atZero is jobs, copied, all submitted at t=0.
func atZero(jobs []trace.Job) []trace.Job {
	out := make([]trace.Job, len(jobs))
	for i, j := range jobs {
		j.Submit = 0
		out[i] = j
	}
	return out
}

func (s Spec) cluster() (policy.Cluster, error) {
	per := s.GPUsPerNode
	if per <= 0 {
		per = 8
	}
	switch {
	case s.GPUs > 0:
		return WithGPUs(s.GPUs, per, s.NodesPerRack)
	case s.ClusterSpec != "":
		cs, err := trace.LoadClusterSpec(s.ClusterSpec)
		if err != nil {
			return policy.Cluster{}, err
		}
		return FromSpec(cs)
	case s.Nodes != "":
		ns, err := trace.LoadAlibabaNodes(s.Nodes)
		if err != nil {
			return policy.Cluster{}, err
		}
		return FromNodes(ns)
	}
	return policy.Cluster{}, fmt.Errorf("no cluster: give a GPU count, a cluster spec or a node list")
}
