package live

import (
	"fmt"
	"sort"
	"strings"
)

// class is the jobs that may run on the same nodes: the policy decides
// each class on exactly those nodes. With one pool and no constraints
// (the usual cluster) there is one class holding every job and node.
// Preemption happens within a class.
type class struct {
	nodes   []string // eligible node IDs, sorted
	entries []*entry
}

// classes sorts the round's jobs into classes by their eligible nodes. A
// queued job no node can take gets e.unfit (its reason) and no class.
func (s *Scheduler) classes(w *world, es []*entry) []*class {
	byKey := map[string]*class{}
	var done []*entry
	for _, e := range es {
		nodes, ok := s.eligible(w, e)
		switch {
		case e.phase == phaseDone:
			done = append(done, e)
			continue
		case !ok:
			continue
		}
		key := strings.Join(nodes, ",")
		c := byKey[key]
		if c == nil {
			c = &class{nodes: nodes}
			byKey[key] = c
		}
		c.entries = append(c.entries, e)
	}
	out := make([]*class, 0, len(byKey))
	for _, c := range byKey {
		out = append(out, c)
	}
	sort.Slice(out, func(a, b int) bool { return strings.Join(out[a].nodes, ",") < strings.Join(out[b].nodes, ",") })
	if len(out) > 0 {
		// Finished jobs only teach learning policies; once is enough.
		out[0].entries = append(out[0].entries, done...)
	}
	return out
}

// eligible is where e may run; ok is false for jobs the policy must not
// see (invalid, unplaceable, or stopped).
func (s *Scheduler) eligible(w *world, e *entry) (nodes []string, ok bool) {
	switch e.phase {
	case phaseQueued:
		if e.job == nil || e.job.err != nil {
			return nil, false
		}
		if why := s.placeBackoff(e.rec, unix(s.now())); why != "" {
			e.unfit = why
			return nil, false
		}
		pool, err := s.targetPool(e.stub.Meta, w.pools)
		if err != nil {
			e.unfit = err.Error()
			return nil, false
		}
		nodes = eligibleNodes(e.job.job, e.job.gang, pool, w.nodes)
		if len(nodes) == 0 {
			e.unfit = fmt.Sprintf("no ready node with caravan GPUs in pool %q matches the job's datacenters and constraints", pool)
			return nil, false
		}
		return nodes, true
	case phaseRunning:
		if e.job != nil && e.job.err == nil {
			nodes = eligibleNodes(e.job.job, e.job.gang, e.stub.NodePool, w.nodes)
		}
		if !holdsWithin(e.held, nodes) {
			nodes = poolNodes(e.stub.NodePool, w.nodes)
		}
		return nodes, holdsWithin(e.held, nodes)
	}
	return nil, false
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
