package live

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
)

// reconcile reads the world afresh into a new mirror: every job of the
// namespace (with meta), every allocation, the node pools and each ready
// node's fingerprint. It is the safety net under the event stream: run
// when leading starts, after the stream broke, when events lag behind the
// scheduler's own writes, and every Config.ReconcileEvery.
func (s *Scheduler) reconcile() (*mirror, error) {
	m := newMirror()
	m.fresh = s.wrote
	q := &api.QueryOptions{Namespace: s.cfg.Namespace}
	var stubs []*jobStub
	s.call()
	qm, err := s.api.Raw().Query("/v1/jobs?meta=true", &stubs, q)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	m.listed[api.TopicJob] = qm.LastIndex
	for _, j := range stubs {
		m.jobs[j.ID] = j
		m.seen[objKey{api.TopicJob, j.ID}] = j.ModifyIndex
	}
	s.call()
	allocs, qm, err := s.api.Allocations().List(q)
	if err != nil {
		return nil, fmt.Errorf("list allocations: %w", err)
	}
	m.listed[api.TopicAllocation] = qm.LastIndex
	for _, a := range allocs {
		m.allocs[a.ID] = a
		m.seen[objKey{api.TopicAllocation, a.ID}] = a.ModifyIndex
	}
	if err := s.listPools(m); err != nil {
		return nil, err
	}
	if err := s.listNodes(m); err != nil {
		return nil, err
	}
	s.metrics.reconciles.Inc()
	return m, nil
}

// listPools lists the node pools, so a job naming a missing one waits
// with that reason instead of failing its admission every round.
func (s *Scheduler) listPools(m *mirror) error {
	s.call()
	pools, qm, err := s.api.NodePools().List(nil)
	if err != nil {
		return fmt.Errorf("list node pools: %w", err)
	}
	m.listed[api.TopicNodePool] = qm.LastIndex
	for _, p := range pools {
		m.pools[p.Name] = true
		m.seen[objKey{api.TopicNodePool, p.Name}] = p.ModifyIndex
	}
	return nil
}

// listNodes reads every ready node outside the queue pool in full (the
// list's stubs lack the caravan driver's attributes).
func (s *Scheduler) listNodes(m *mirror) error {
	s.call()
	stubs, qm, err := s.api.Nodes().List(nil)
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	m.listed[api.TopicNode] = qm.LastIndex
	for _, stub := range stubs {
		m.seen[objKey{api.TopicNode, stub.ID}] = stub.ModifyIndex
		if stub.NodePool == s.cfg.QueuePool || stub.Status != "ready" {
			continue
		}
		s.call()
		n, _, err := s.api.Nodes().Info(stub.ID, nil)
		if err != nil {
			return fmt.Errorf("read node %s: %w", stub.Name, err)
		}
		m.seen[objKey{api.TopicNode, stub.ID}] = max(stub.ModifyIndex, n.ModifyIndex)
		if info := s.nodeInfo(n); info != nil {
			m.nodes[info.ID] = info
		}
	}
	return nil
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
