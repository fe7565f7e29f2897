package live

import (
	"sort"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// classesIncr is classes over the kept entries: a job's eligibility is
// computed again only when it changed, when the nodes or pools changed
// (a new node-set memo), or while a place backoff makes it depend on the
// clock. Classes keep their policy nodes from round to round.
func (s *Scheduler) classesIncr(w *world, es []*entry) []*class {
	in := s.inc
	if w.sets == nil {
		w.sets = &nodeSets{}
	}
	all := in.sets != w.sets || in.poolsGen != s.mirror.poolsGen
	in.nodesMoved = all
	if all {
		in.sets, in.poolsGen, in.classes = w.sets, s.mirror.poolsGen, map[int]*class{}
		in.view.nodes = true
	}
	for _, c := range in.classes {
		c.entries = c.entries[:0]
	}
	var done []*entry
	for _, e := range es {
		k := &e.kept
		if all || !k.clsOK || e.phase == phaseQueued && e.rec.PlaceFailedAt != 0 {
			s.classifyEligible(w, e)
		}
		switch {
		case e.phase == phaseDone:
			done = append(done, e)
		case k.cls != nil:
			k.cls.entries = append(k.cls.entries, e)
		}
	}
	out := make([]*class, 0, len(in.classes))
	for _, c := range in.classes {
		if len(c.entries) > 0 {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].key < out[b].key })
	s.finished = done // learnt after the round (learn.go)
	return out
}

// classifyEligible finds e's class (and unfit) afresh.
func (s *Scheduler) classifyEligible(w *world, e *entry) {
	k := &e.kept
	e.unfit = ""
	set, ok := s.eligible(w, e)
	k.cls, k.clsOK = nil, true
	if !ok || e.phase == phaseDone {
		return
	}
	c := s.inc.classes[set.id]
	if c == nil {
		c = &class{nodes: set.ids, key: set.key}
		s.inc.classes[set.id] = c
	}
	k.cls = c
}

// snapshotIncr is snapshot over kept policy views and node storage: jobs
// whose view is current only have their clock-driven fields brought
// forward, and each node's GPUs are compared with last round's, its
// Cluster.Gen counter moving when they differ. Snapshot.JobGen carries
// each view's stamp, new whenever anything of the view but its progress
// changed; Snapshot.ProgressGen its progress stamp.
func (s *Scheduler) snapshotIncr(l *gpuBook, c *class, now float64) *policy.Snapshot {
	snap := &policy.Snapshot{Now: now}
	s.classNodes(l, c)
	snap.Cluster.Nodes, snap.Cluster.Gen = c.pn, c.gen
	snap.Cluster.Links = s.measuredLinks(l, c.nodes)
	was := len(c.jobs)
	c.jobs, c.jobGen, c.progGen = c.jobs[:0], c.jobGen[:0], c.progGen[:0]
	for _, e := range c.entries {
		if j := s.keptJob(l, e); j != nil {
			c.jobs = append(c.jobs, j)
			c.jobGen = append(c.jobGen, e.kept.gen)
			c.progGen = append(c.progGen, e.kept.pgen)
		}
	}
	if was > len(c.jobs) {
		clear(c.jobs[len(c.jobs):was]) // no finished job kept alive here
	}
	snap.Jobs, snap.JobGen, snap.ProgressGen = c.jobs, c.jobGen, c.progGen
	return snap
}

// classNodes brings the class's policy nodes up to the book, bumping the
// Gen of every node whose GPUs changed.
func (s *Scheduler) classNodes(l *gpuBook, c *class) {
	drain := draining(l, c.entries)
	fresh := len(c.pn) != len(c.nodes)
	if fresh {
		c.pn, c.gen = make([]policy.Node, len(c.nodes)), make([]uint64, len(c.nodes))
	}
	for i, id := range c.nodes {
		n, pn := l.nodes[id], &c.pn[i]
		if fresh {
			pn.Name, pn.GPUs = id, make([]policy.GPU, len(n.GPUs))
		}
		moved, us := fresh, l.used[id]
		for k, g := range n.GPUs {
			u := lessDrain(us[k], drain, id, k)
			pg := policy.GPU{Index: k, Model: g.Model, MemoryMiB: g.MemoryMiB, UsedFraction: u.Fraction, UsedMemoryMiB: u.MemMiB}
			if pn.GPUs[k] != pg {
				pn.GPUs[k], moved = pg, true
			}
		}
		if moved {
			c.gen[i]++
		}
	}
}

// keptJob is e's policy view, built when it changed, otherwise with a
// running job's service and slots brought up to now; its stamp (kept.gen)
// moves with any change, as Snapshot.JobGen's contract asks. A job whose
// service accrues carries it as a policy.Accrual from when it was last
// stamped, so time passing alone changes nothing the policy must re-read.
func (s *Scheduler) keptJob(l *gpuBook, e *entry) *policy.Job {
	k := &e.kept
	fresh := !k.pjOK
	if fresh {
		k.pj, k.pjOK = s.policyJob(e), true
		k.gen, k.pgen = s.inc.stampNext(), s.inc.stampNext()
	}
	j := k.pj
	if j == nil || e.phase != phaseRunning {
		return j
	}
	r := e.rec
	// compared field by field, not through a copy of the whole job (every
	// running job, every round)
	moved := j.Submit != r.Submit || j.LastStart != r.LastStart || j.QueuedSince != r.QueuedSince ||
		j.Preemptions != r.Preemptions
	j.Submit, j.LastStart = r.Submit, r.LastStart
	j.QueuedSince, j.Preemptions = r.QueuedSince, r.Preemptions
	moved = rebase(j, r, share(e.held)) || moved
	// Whole-GPU slots hold all memory, as the GPU book counted them; that
	// changes only with the view or the nodes.
	for i := range j.Placement.Slots {
		if i < len(e.held) && (fresh || s.inc.nodesMoved) {
			if m := l.slotMem(e.held[i]); m != j.Placement.Slots[i].MemMiB {
				j.Placement.Slots[i].MemMiB, moved = m, true
			}
		}
	}
	if moved {
		k.gen = s.inc.stampNext()
	}
	return j
}

// rebase brings j's service to r's: kept as it is while it accrues at
// gpus from the same accrual (its ServiceAt then agrees with r's accrued
// sums up to rounding), else set from r, accruing from r.Accounted while
// the job's tasks run. It reports whether j changed.
func rebase(j *policy.Job, r *record, gpus float64) bool {
	acc := policy.Accrual{On: r.Accounted > 0, Since: r.Accounted, GPUs: gpus}
	if j.Accrual.On && acc.On && j.Accrual.GPUs == gpus && j.Accrual.Since <= r.Accounted {
		return false
	}
	if j.Accrual == acc && j.Attained == r.Attained && j.Executed == r.Executed {
		return false
	}
	j.Attained, j.Executed, j.Accrual = r.Attained, r.Executed, acc
	return true
}
