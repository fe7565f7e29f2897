package live

import (
	"errors"
	"fmt"

	"github.com/hashicorp/nomad/api"
)

// reconcile reads the world afresh into a new mirror: every job of the
// namespace (with meta), every allocation, the pending evaluations, the
// node pools and each ready node's fingerprint. It is the safety net under the event stream: run
// when leading starts, after the stream broke, when events lag behind the
// scheduler's own writes, and every Config.ReconcileEvery.
func (s *Scheduler) reconcile() (*mirror, error) {
	l, err := s.readLists()
	if err != nil {
		return nil, err
	}
	return s.buildMirror(l)
}

// lists is what a full reconcile reads in one go, each list with the
// Nomad index it was read at.
type lists struct {
	fresh  uint64 // the scheduler's newest write when the reading began
	jobs   []*jobStub
	allocs []*api.AllocationListStub
	pools  []*api.NodePool
	nodes  []*api.NodeListStub
	evals  []*evalStub // pending only
	at     map[api.Topic]uint64
}

// readLists reads the five lists (safe beside a round: it touches only
// the API client and the write index).
func (s *Scheduler) readLists() (*lists, error) {
	s.writeMu.Lock()
	l := &lists{fresh: s.wrote, at: map[api.Topic]uint64{}}
	s.writeMu.Unlock()
	q := &api.QueryOptions{Namespace: s.cfg.Namespace}
	s.call("reconcile jobs")
	qm, err := s.api.Raw().Query("/v1/jobs?meta=true", &l.jobs, q)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	l.at[api.TopicJob] = qm.LastIndex
	s.call("reconcile allocations")
	l.allocs, qm, err = s.api.Allocations().List(q)
	if err != nil {
		return nil, fmt.Errorf("list allocations: %w", err)
	}
	l.at[api.TopicAllocation] = qm.LastIndex
	if l.evals, l.at[api.TopicEvaluation], err = s.readPendingEvals(q); err != nil {
		return nil, err
	}
	if l.pools, l.at[api.TopicNodePool], err = s.readPools(); err != nil {
		return nil, err
	}
	s.call("reconcile nodes")
	l.nodes, qm, err = s.api.Nodes().List(nil)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	l.at[api.TopicNode] = qm.LastIndex
	return l, nil
}

// buildMirror makes a mirror of the lists, reading in full the nodes that
// changed since the current mirror read them.
func (s *Scheduler) buildMirror(l *lists) (*mirror, error) {
	m := newMirror()
	m.fresh = l.fresh
	m.listed[api.TopicJob] = l.at[api.TopicJob]
	for _, j := range l.jobs {
		m.jobs[j.ID] = j
		m.seen[objKey{api.TopicJob, j.ID}] = j.ModifyIndex
	}
	m.listed[api.TopicAllocation] = l.at[api.TopicAllocation]
	for _, a := range l.allocs {
		m.allocs[a.ID] = a
		m.seen[objKey{api.TopicAllocation, a.ID}] = a.ModifyIndex
	}
	m.setEvals(l.evals, l.at[api.TopicEvaluation])
	m.setPools(l.pools, l.at[api.TopicNodePool])
	if err := s.setNodes(m, l.nodes, l.at[api.TopicNode]); err != nil {
		return nil, err
	}
	s.metrics.reconciles.Inc()
	return m, nil
}

// listPools lists the node pools, so a job naming a missing one waits
// with that reason instead of failing its admission every round.
func (s *Scheduler) listPools(m *mirror) error {
	pools, at, err := s.readPools()
	if err != nil {
		return err
	}
	m.setPools(pools, at)
	return nil
}

func (s *Scheduler) readPools() ([]*api.NodePool, uint64, error) {
	s.call("reconcile pools")
	pools, qm, err := s.api.NodePools().List(nil)
	if err != nil {
		return nil, 0, fmt.Errorf("list node pools: %w", err)
	}
	return pools, qm.LastIndex, nil
}

// setPools records the node pools as listed at index at.
func (m *mirror) setPools(pools []*api.NodePool, at uint64) {
	m.listed[api.TopicNodePool] = at
	m.poolsGen++
	for _, p := range pools {
		m.pools[p.Name] = true
		m.seen[objKey{api.TopicNodePool, p.Name}] = p.ModifyIndex
	}
}

// nodeReaders bounds the node reads a full reconcile sends at once.
const nodeReaders = 8

// setNodes records the listed nodes and reads in full (the list's stubs lack the
// caravan driver's attributes and node meta) every ready node outside the
// queue pool that changed since the previous mirror read it: a node at the
// same ModifyIndex is the same node, so at scale a reconcile reads the few
// nodes that changed, not the whole fleet.
func (s *Scheduler) setNodes(m *mirror, stubs []*api.NodeListStub, at uint64) error {
	m.listed[api.TopicNode] = at
	var read []*api.NodeListStub
	for _, stub := range stubs {
		m.seen[objKey{api.TopicNode, stub.ID}] = stub.ModifyIndex
		if stub.NodePool == s.cfg.QueuePool || stub.Status != "ready" {
			continue
		}
		if old := s.mirror; old != nil && old.nodeAt[stub.ID] == stub.ModifyIndex {
			m.nodeAt[stub.ID] = stub.ModifyIndex
			if info := old.nodes[stub.ID]; info != nil {
				m.nodes[stub.ID] = info
			}
			continue
		}
		read = append(read, stub)
	}
	nodes, err := s.readNodes(read)
	if err != nil {
		return err
	}
	for i, n := range nodes {
		m.seen[objKey{api.TopicNode, n.ID}] = max(read[i].ModifyIndex, n.ModifyIndex)
		m.setNode(n, s.nodeInfo(n))
	}
	return nil
}

// readNodes reads nodes in full, nodeReaders at once.
func (s *Scheduler) readNodes(stubs []*api.NodeListStub) ([]*api.Node, error) {
	out := make([]*api.Node, len(stubs))
	errs := inParallel(len(stubs), nodeReaders, func(i int) error {
		s.call("node read")
		n, _, err := s.api.Nodes().Info(stubs[i].ID, nil)
		if err != nil {
			return fmt.Errorf("read node %s: %w", stubs[i].Name, err)
		}
		out[i] = n
		return nil
	})
	return out, errors.Join(errs...)
}

// nodeInfo is a node the scheduler may place on: ready, eligible, not
// draining, outside the queue pool, with caravan GPUs; nil otherwise.
func (s *Scheduler) nodeInfo(n *api.Node) *nodeInfo {
	if n.NodePool == s.cfg.QueuePool || !usable(n) {
		return nil
	}
	info, err := parseNode(n)
	if err != nil {
		s.log.Warn("ignoring node with a bad caravan fingerprint", "error", err)
		return nil
	}
	if len(info.GPUs) == 0 {
		return nil
	}
	return &info
}

// streamFrom is the index the event stream starts after: the oldest of
// the lists, so no change after any of them is missed.
func (m *mirror) streamFrom() uint64 {
	from := uint64(0)
	for _, i := range m.listed {
		if from == 0 || i < from {
			from = i
		}
	}
	return max(from, m.index)
}
