package order

import (
	"cmp"
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
	slices.SortFunc(ks, func(x, y keyed) int {
		if x.queue != y.queue {
			return cmp.Compare(x.queue, y.queue)
		}
		for i := range x.k {
			if c := cmp.Compare(x.k[i], y.k[i]); c != 0 {
				return c
			}
		}
		if bySubmit(x.job, y.job) {
			return -1
		}
		if bySubmit(y.job, x.job) {
			return 1
		}
		return 0
	})
	out := make([]policy.Ranked, len(ks))
	for i, k := range ks {
		out[i] = policy.Ranked{Job: k.job, Queue: k.queue}
	}
	return out
}

// gpuShare is a job's total GPU demand, treating Fraction 0 as 1.
func gpuShare(j *policy.Job) float64 {
	f := j.Fraction
	if f <= 0 {
		f = 1
	}
	return float64(j.Workers) * f
}
