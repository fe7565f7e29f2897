package live

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
)

// admitJob rewrites job in place to run exactly at targets in pool, every
// worker told its rank and the gang's rendezvous rv. The caller registers
// it with check-and-set.
func admitJob(job *api.Job, pool string, ts []target, rv rendezvous, now time.Time) {
	unparkJob(job)
	job.NodePool = &pool
	splitGroups(job, ts)
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
				rv.tell(task, rankOf(ts, t.Worker.Group), len(ts))
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

// requeueJob rewrites a preempted job in place back into the queue pool,
// unpinned. Running allocations are not stopped by this; the caller stops
// them.
func requeueJob(job *api.Job, queuePool, reason string) {
	n, _ := strconv.Atoi(job.Meta[MetaPreemptions])
	setMeta(job, MetaPreemptions, strconv.Itoa(n+1))
	unpinJob(job, queuePool, reason)
}

// unpinJob rewrites job in place back into the queue pool, unpinned and
// unparked, with reason in its meta.
func unpinJob(job *api.Job, queuePool, reason string) {
	unparkJob(job)
	job.NodePool = &queuePool
	for _, tg := range job.TaskGroups {
		tg.Constraints = withoutPin(tg.Constraints)
		for _, task := range tg.Tasks {
			if task.Driver == "caravan" && task.Config != nil {
				delete(task.Config, "gpu_uuids")
			}
			forgetGangEnv(task)
		}
	}
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

// splitGroups replaces each worker group of count N by its N workers'
// groups of count 1 (see replicas), so each can be pinned on its own.
func splitGroups(job *api.Job, ts []target) {
	split := map[string][]string{}
	for _, t := range ts {
		if t.Worker.From != "" {
			split[t.Worker.From] = append(split[t.Worker.From], t.Worker.Group)
		}
	}
	if len(split) == 0 {
		return
	}
	var out []*api.TaskGroup
	for _, tg := range job.TaskGroups {
		names, ok := split[deref(tg.Name)]
		if !ok {
			out = append(out, tg)
			continue
		}
		for _, name := range names {
			c := copyGroup(tg)
			c.Name, c.Count = &name, ptrTo(1)
			out = append(out, c)
		}
	}
	job.TaskGroups = out
}

// copyGroup deep-copies a group through its JSON form, as Nomad's API
// carries it.
func copyGroup(tg *api.TaskGroup) *api.TaskGroup {
	b, err := json.Marshal(tg)
	if err != nil {
		panic(fmt.Sprintf("task group does not encode: %v", err)) // api types always do
	}
	var c api.TaskGroup
	if err := json.Unmarshal(b, &c); err != nil {
		panic(fmt.Sprintf("task group does not decode: %v", err))
	}
	return &c
}

func ptrTo[T any](v T) *T { return &v }

// rankOf is a worker's rank: its place in the gang.
func rankOf(ts []target, group string) int {
	for i, t := range ts {
		if t.Worker.Group == group {
			return i
		}
	}
	return -1
}
