package trace

import (
	"fmt"
	"sort"
)

// Job is one recorded job, normalised across trace formats.
type Job struct {
	ID string
	// Submit is seconds since the trace's first submission.
	Submit float64
	// Duration is the recorded run time in seconds (on the placement the
	// job had in the real cluster; the simulator treats it as consolidated).
	Duration float64
	// GPUs is the gang size (workers); Fraction is the share of one GPU
	// each worker needs (1 for whole-GPU jobs).
	GPUs     int
	Fraction float64
	MemMiB   int64
	CPUMilli int64
	Model    string
	User     string
	// Group is the trace's sub-cluster (Philly virtual cluster), if any.
	Group string
	// Source is "file:line" for error messages.
	Source string
}

// GPUDemand is the job's total GPU demand in whole-GPU units.
func (j Job) GPUDemand() float64 { return float64(j.GPUs) * j.Fraction }

// Trace is a loaded job list, sorted by submit time.
type Trace struct {
	Name string
	Jobs []Job
	// Cluster is the cluster the trace ships with, if any.
	Cluster *ClusterSpec
}

// sortJobs orders by submit time, keeping file order for ties, and shifts
// time so the first job arrives at 0.
func sortJobs(jobs []Job) {
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].Submit < jobs[b].Submit })
	if len(jobs) == 0 {
		return
	}
	t0 := jobs[0].Submit
	for i := range jobs {
		jobs[i].Submit -= t0
	}
}

// CheckFits returns an error naming the first job (file and line) whose
// gang needs more GPUs than the cluster has in total.
func CheckFits(jobs []Job, totalGPUs int) error {
	for _, j := range jobs {
		if j.GPUs > totalGPUs {
			return fmt.Errorf("%s: job %s needs %d GPUs but the cluster has %d", j.Source, j.ID, j.GPUs, totalGPUs)
		}
	}
	return nil
}

// Stats summarises a trace: job count, total GPU-seconds and the span from
// first to last submission.
type Stats struct {
	Jobs       int
	GPUSeconds float64
	Span       float64
	MaxGPUs    int
}

// Summarise computes Stats.
func Summarise(jobs []Job) Stats {
	var s Stats
	s.Jobs = len(jobs)
	for _, j := range jobs {
		s.GPUSeconds += j.GPUDemand() * j.Duration
		if j.GPUs > s.MaxGPUs {
			s.MaxGPUs = j.GPUs
		}
		if j.Submit > s.Span {
			s.Span = j.Submit
		}
	}
	return s
}

// OfferedLoad is the average GPU demand over the submit span divided by
// the cluster's GPUs: above ~0.8 queues form.
func (s Stats) OfferedLoad(gpus int) float64 {
	if s.Span <= 0 || gpus <= 0 {
		return 0
	}
	return s.GPUSeconds / s.Span / float64(gpus)
}
