package policytest

import "github.com/caravan-dl/caravan/scheduler/policy"

// Apply returns the snapshot after an executor carried out d: preempted
// jobs are queued again and their GPUs freed, started jobs run on their
// new placement (a running job's Start replaces its old slots).
func Apply(s *policy.Snapshot, d policy.Decision) *policy.Snapshot {
	out := Clone(s)
	byID := map[string]*policy.Job{}
	for _, j := range out.Jobs {
		byID[j.ID] = j
	}
	for _, id := range d.Preempts {
		if j := byID[id]; j != nil && j.State == policy.Running {
			unrun(&out.Cluster, j)
			j.State, j.QueuedSince, j.Preemptions = policy.Queued, out.Now, j.Preemptions+1
		}
	}
	for _, st := range d.Starts {
		j := byID[st.JobID]
		if j == nil {
			continue
		}
		if j.State == policy.Running {
			unrun(&out.Cluster, j)
		}
		j.LastStart = out.Now
		Run(&out.Cluster, j, st.Placement)
	}
	return out
}

// unrun takes a running job's slots off the cluster's GPUs.
func unrun(c *policy.Cluster, j *policy.Job) {
	neg := policy.Placement{}
	for _, s := range j.Placement.Slots {
		s.Fraction, s.MemMiB = -s.Fraction, -s.MemMiB
		neg.Slots = append(neg.Slots, s)
	}
	util := j.Util
	j.Util = -util
	Run(c, j, neg)
	j.Util = util
	j.Placement = policy.Placement{}
}
