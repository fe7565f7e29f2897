package live

import (
	"github.com/caravan-dl/caravan/scheduler/policy"
)

// snapshot builds what the policy sees of one class: its nodes' GPUs with
// everything committed on them, and its valid queued, running and
// just-finished jobs.
func (s *Scheduler) snapshot(l *gpuBook, nodes []string, es []*entry, now float64) *policy.Snapshot {
	snap := &policy.Snapshot{Now: now}
	drain := draining(l, es)
	for _, id := range nodes {
		n := l.nodes[id]
		pn, us := policy.Node{Name: id}, l.used[id]
		for i, g := range n.GPUs {
			u := lessDrain(us[i], drain, id, i)
			pn.GPUs = append(pn.GPUs, policy.GPU{Index: i, Model: g.Model, MemoryMiB: g.MemoryMiB,
				UsedFraction: u.Fraction, UsedMemoryMiB: u.MemMiB})
		}
		snap.Cluster.Nodes = append(snap.Cluster.Nodes, pn)
	}
	snap.Cluster.Links = s.measuredLinks(l, nodes)
	for _, e := range es {
		j := s.policyJob(e)
		if j == nil {
			continue
		}
		// Whole-GPU slots hold all memory, as the GPU book counted them.
		for i, sl := range j.Placement.Slots {
			j.Placement.Slots[i].MemMiB = l.slotMem(target{NodeID: sl.Node, GPU: sl.GPU, Fraction: sl.Fraction, MemMiB: sl.MemMiB})
		}
		snap.Jobs = append(snap.Jobs, j)
	}
	return snap
}

// lessDrain is u, what the book holds on GPU k of node id, less what
// draining jobs still hold there (drain, from draining), never below zero
// (a fingerprint claiming more free than the GPU has reads as unused).
func lessDrain(u use, drain map[gpuKey]use, id string, k int) use {
	d := drain[gpuKey{id, k}] // an empty map answers before hashing
	u.Fraction, u.MemMiB = max(u.Fraction-d.Fraction, 0), max(u.MemMiB-d.MemMiB, 0)
	return u
}

// draining is what queued jobs still hold (preempted, their tasks
// checkpointing). The policy sees it as free, as the simulator's policy
// sees GPUs it just preempted: otherwise each round during the drain
// would preempt yet another job for the same waiting one. The GPU book
// still holds it, so apply admits nothing there until it is really free.
func draining(l *gpuBook, es []*entry) map[gpuKey]use {
	out := map[gpuKey]use{}
	for _, e := range es {
		if e.phase != phaseQueued {
			continue
		}
		for _, t := range e.held {
			k := gpuKey{t.NodeID, t.GPU}
			u := out[k]
			u.Fraction += t.Fraction
			u.MemMiB += l.slotMem(t)
			out[k] = u
		}
	}
	return out
}

// policyJob is the policy's view of one entry; nil for jobs it must not see.
func (s *Scheduler) policyJob(e *entry) *policy.Job {
	r := e.rec
	j := &policy.Job{
		ID: e.stub.ID, Model: e.stub.Meta[MetaModel], Submit: r.Submit,
		Attained: r.Attained, Executed: r.Executed, LastStart: r.LastStart,
		QueuedSince: r.QueuedSince, Preemptions: r.Preemptions,
	}
	switch e.phase {
	case phaseQueued:
		if e.job == nil || e.job.err != nil {
			return nil
		}
		j.State = policy.Queued
	case phaseRunning:
		j.State = policy.Running
		j.Placement = toPolicy(e.held)
		if e.job == nil || e.job.err != nil {
			j.Workers, j.Fraction = len(e.held), 1
			return j
		}
	case phaseDone:
		j.State = policy.Finished
		return j
	default:
		return nil
	}
	g := e.job.gang
	j.Workers, j.Fraction, j.MemMiB = len(g.Workers), g.Fraction, g.MemMiB
	j.TargetLoss = e.job.targetLoss
	j.Features.BatchSize = e.job.batch
	s.fillProgress(j)
	return j
}
