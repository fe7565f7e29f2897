package live

import (
	"errors"
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
	s.call("reconcile jobs")
	qm, err := s.api.Raw().Query("/v1/jobs?meta=true", &stubs, q)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	m.listed[api.TopicJob] = qm.LastIndex
	for _, j := range stubs {
		m.jobs[j.ID] = j
		m.seen[objKey{api.TopicJob, j.ID}] = j.ModifyIndex
	}
	s.call("reconcile allocations")
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
	s.call("reconcile pools")
	pools, qm, err := s.api.NodePools().List(nil)
	if err != nil {
		return fmt.Errorf("list node pools: %w", err)
	}
	m.listed[api.TopicNodePool] = qm.LastIndex
	m.poolsGen++
	for _, p := range pools {
		m.pools[p.Name] = true
		m.seen[objKey{api.TopicNodePool, p.Name}] = p.ModifyIndex
	}
	return nil
}

// nodeReaders bounds the node reads a full reconcile sends at once.
const nodeReaders = 8

// listNodes lists the nodes and reads in full (the list's stubs lack the
// caravan driver's attributes and node meta) every ready node outside the
// queue pool that changed since the previous mirror read it: a node at the
// same ModifyIndex is the same node, so at scale a reconcile reads the few
// nodes that changed, not the whole fleet.
func (s *Scheduler) listNodes(m *mirror) error {
	s.call("reconcile nodes")
	stubs, qm, err := s.api.Nodes().List(nil)
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	m.listed[api.TopicNode] = qm.LastIndex
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
