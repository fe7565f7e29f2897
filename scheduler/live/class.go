package live

import (
	"fmt"
	"sort"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// class is the jobs that may run on the same nodes: the policy decides
// each class on exactly those nodes. With one pool and no constraints
// (the usual cluster) there is one class holding every job and node.
// Preemption happens within a class.
type class struct {
	nodes   []string // eligible node IDs, sorted
	key     string   // nodes joined
	entries []*entry
	// pn and gen are the class's policy nodes and their change counters,
	// kept from round to round by the incremental round (snapshotIncr).
	pn  []policy.Node
	gen []uint64
	// jobs, jobGen and progGen are the storage of the class's snapshot's
	// Jobs, JobGen and ProgressGen, reused from round to round (the
	// simulator reuses its snapshot's the same way): a snapshot lives
	// until the next Decide.
	jobs            []*policy.Job
	jobGen, progGen []uint64
}

// classes sorts the round's jobs into classes by their eligible nodes. A
// queued job no node can take gets e.unfit (its reason) and no class.
func (s *Scheduler) classes(w *world, es []*entry) []*class {
	if w.sets == nil {
		w.sets = &nodeSets{}
	}
	byID := map[int]*class{}
	var done []*entry
	for _, e := range es {
		set, ok := s.eligible(w, e)
		switch {
		case e.phase == phaseDone:
			done = append(done, e)
			continue
		case !ok:
			continue
		}
		c := byID[set.id]
		if c == nil {
			c = &class{nodes: set.ids, key: set.key}
			byID[set.id] = c
		}
		c.entries = append(c.entries, e)
	}
	out := make([]*class, 0, len(byID))
	for _, c := range byID {
		out = append(out, c)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].key < out[b].key })
	s.finished = done // learnt after the round (learn.go)
	return out
}

// eligible is where e may run; ok is false for jobs the policy must not
// see (invalid, unplaceable, or stopped).
func (s *Scheduler) eligible(w *world, e *entry) (nodes nodeSet, ok bool) {
	switch e.phase {
	case phaseQueued:
		if e.job == nil || e.job.err != nil {
			return nodeSet{}, false
		}
		if why := s.placeBackoff(e.rec, unix(s.now())); why != "" {
			e.unfit = why
			return nodeSet{}, false
		}
		pool, err := s.targetPool(e.stub.Meta, w.pools)
		if err != nil {
			e.unfit = err.Error()
			return nodeSet{}, false
		}
		nodes = w.eligibleSet(e.job, pool)
		if len(nodes.ids) == 0 {
			e.unfit = fmt.Sprintf("no ready node with caravan GPUs in pool %q matches the job's datacenters and constraints", pool)
			return nodeSet{}, false
		}
		return nodes, true
	case phaseRunning:
		if e.job != nil && e.job.err == nil {
			nodes = w.eligibleSet(e.job, e.stub.NodePool)
		}
		if !holdsWithin(e.held, nodes.ids) {
			nodes = w.poolSet(e.stub.NodePool)
		}
		return nodes, holdsWithin(e.held, nodes.ids)
	}
	return nodeSet{}, false
}

// holdsWithin reports whether every held GPU is on one of nodes.
func holdsWithin(held []target, nodes []string) bool {
	for _, t := range held {
		i := sort.SearchStrings(nodes, t.NodeID)
		if i == len(nodes) || nodes[i] != t.NodeID {
			return false
		}
	}
	return true
}

func poolNodes(pool string, nodes map[string]*nodeInfo) []string {
	var out []string
	for id, n := range nodes {
		if pool == allPool || n.Pool == pool {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
