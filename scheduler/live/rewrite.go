package live

import (
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
)

// admitJob rewrites job in place to run exactly at targets in pool. The
// caller registers it with check-and-set.
func admitJob(job *api.Job, pool string, ts []target, now time.Time) {
	job.NodePool = &pool
	byGroup := map[string]target{}
	for _, t := range ts {
		byGroup[t.Worker.Group] = t
	}
	for _, tg := range job.TaskGroups {
		tg.Constraints = withoutPin(tg.Constraints)
		t, ok := byGroup[deref(tg.Name)]
		if !ok {
			continue
		}
		tg.Constraints = append(tg.Constraints, api.NewConstraint(nodeIDTarget, "=", t.NodeID))
		for _, task := range tg.Tasks {
			if task.Name == t.Worker.Task {
				pinTask(task, t)
			}
		}
	}
	setMeta(job, MetaAdmitted, now.UTC().Format(time.RFC3339))
	setMeta(job, MetaPlacement, encodePlacement(ts))
	delete(job.Meta, MetaReason)
}

// pinTask points a caravan task at one GPU with the policy's share.
func pinTask(task *api.Task, t target) {
	if task.Config == nil {
		task.Config = map[string]any{}
	}
	task.Config["gpu_uuids"] = []string{t.UUID}
	if req, err := taskRequest(task); err == nil && req.Whole > 0 {
		return
	}
	task.Config["gpu_fraction"] = t.Fraction
	if t.MemMiB > 0 {
		task.Config["gpu_memory"] = fmt.Sprintf("%dMiB", t.MemMiB)
	}
}

// requeueJob rewrites job in place back into the queue pool, unpinned.
// Running allocations are not stopped by this; the caller stops them.
func requeueJob(job *api.Job, queuePool, reason string) {
	job.NodePool = &queuePool
	for _, tg := range job.TaskGroups {
		tg.Constraints = withoutPin(tg.Constraints)
		for _, task := range tg.Tasks {
			if task.Driver == "caravan" && task.Config != nil {
				delete(task.Config, "gpu_uuids")
			}
		}
	}
	n, _ := strconv.Atoi(job.Meta[MetaPreemptions])
	setMeta(job, MetaPreemptions, strconv.Itoa(n+1))
	setMeta(job, MetaReason, reason)
	delete(job.Meta, MetaAdmitted)
	delete(job.Meta, MetaPlacement)
}

// withoutPin drops node pins; the scheduler owns placement of its jobs.
func withoutPin(cs []*api.Constraint) []*api.Constraint {
	out := cs[:0]
	for _, c := range cs {
		if c.LTarget != nodeIDTarget {
			out = append(out, c)
		}
	}
	return out
}

func setMeta(job *api.Job, k, v string) {
	if job.Meta == nil {
		job.Meta = map[string]string{}
	}
	job.Meta[k] = v
}
