package order

import (
	"math"
	"slices"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// active returns the queued and running jobs of a snapshot.
func active(s *policy.Snapshot) []*policy.Job {
	out := make([]*policy.Job, 0, len(s.Jobs))
	for _, j := range s.Jobs {
		if j != nil && (j.State == policy.Queued || j.State == policy.Running) {
			out = append(out, j)
		}
	}
	return out
}

// queuedAt is when a job joined its queue: QueuedSince, or Submit if the
// executor never set it.
func queuedAt(j *policy.Job) policy.Seconds {
	if j.QueuedSince > j.Submit {
		return j.QueuedSince
	}
	return j.Submit
}

// bySubmit is the FIFO tie-break every ordering ends with, so equal keys
// always rank the same way.
func bySubmit(a, b *policy.Job) bool {
	if a.Submit != b.Submit {
		return a.Submit < b.Submit
	}
	return a.ID < b.ID
}

// keyed is a job with its sort keys, compared in order (lower first).
type keyed struct {
	job   *policy.Job
	queue int
	k     [3]float64
}

// sortKeyed orders by queue, then the keys, then submit order.
func sortKeyed(ks []keyed) []policy.Ranked {
	for i := range ks {
		for k, v := range ks[i].k {
			if v != v { // NaN from bad input ranks last instead of breaking the sort
				ks[i].k[k] = math.Inf(1)
			}
		}
	}
	slices.SortFunc(ks, compareKeyed)
	out := make([]policy.Ranked, len(ks))
	for i, k := range ks {
		out[i] = policy.Ranked{Job: k.job, Queue: k.queue}
	}
	return out
}

// compareKeyed uses plain comparisons (keys are never NaN) because the
// comparator dominates a 10,000-job decision.
func compareKeyed(x, y keyed) int {
	switch {
	case x.queue != y.queue:
		return x.queue - y.queue
	case x.k[0] < y.k[0]:
		return -1
	case x.k[0] > y.k[0]:
		return 1
	case x.k[1] < y.k[1]:
		return -1
	case x.k[1] > y.k[1]:
		return 1
	case x.k[2] < y.k[2]:
		return -1
	case x.k[2] > y.k[2]:
		return 1
	case bySubmit(x.job, y.job):
		return -1
	case bySubmit(y.job, x.job):
		return 1
	}
	return 0
}

// gpuShare is a job's total GPU demand, treating Fraction 0 as 1.
func gpuShare(j *policy.Job) float64 {
	f := j.Fraction
	if f <= 0 {
		f = 1
	}
	return float64(j.Workers) * f
}
