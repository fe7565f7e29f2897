package live

import (
	"encoding/json"
	"fmt"

	"github.com/hashicorp/nomad/api"
)

// applyEvent folds one event into the mirror. It reports whether the event
// changed anything: a duplicate, an event older than what the mirror holds
// or already in a full reconcile's lists changes nothing. Deployment
// events change nothing here; they only wake the loop.
func (s *Scheduler) applyEvent(m *mirror, ev *event) (bool, error) {
	m.index = max(m.index, ev.Index)
	switch ev.Topic {
	case api.TopicJob:
		return s.applyJob(m, ev)
	case api.TopicAllocation:
		return applyAlloc(m, ev, s.cfg.Namespace)
	case api.TopicNode:
		return s.applyNode(m, ev)
	case api.TopicEvaluation:
		return applyEval(m, ev, s.cfg.Namespace)
	}
	return false, nil
}

// decode reads the payload's key as the HTTP API's JSON (the api
// package's own accessors decode with mapstructure, which drops fields
// whose mapstructure tag differs from the JSON name: a job's NodePool).
func decode(ev *event, key string, out any) error {
	raw, err := payload(ev, key)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// payload is the payload's key as JSON.
func payload(ev *event, key string) ([]byte, error) {
	v, ok := ev.Payload[key]
	if !ok {
		return nil, fmt.Errorf("no %s in the payload", key)
	}
	return v, nil
}

// deleted reports a job event's Deleted flag (false when absent or not a
// boolean).
func deleted(ev *event) bool {
	var d bool
	return json.Unmarshal(ev.Payload["Deleted"], &d) == nil && d
}

// jobPayload is what the job list's stub holds, read from a full job.
type jobPayload struct {
	jobStub
	ParameterizedJob *struct{}
	Dispatched       bool
}

func (s *Scheduler) applyJob(m *mirror, ev *event) (bool, error) {
	raw, err := payload(ev, "Job")
	var j jobPayload
	if err == nil {
		err = json.Unmarshal(raw, &j)
	}
	if err != nil || j.ID == "" {
		return false, fmt.Errorf("job event at index %d: unreadable payload (%v)", ev.Index, err)
	}
	if j.Namespace != s.cfg.Namespace {
		return false, nil
	}
	k := objKey{api.TopicJob, j.ID}
	if deleted(ev) {
		if !m.remove(k, ev.Index) {
			return false, nil
		}
		m.dropJob(j.ID)
		delete(s.jobs, j.ID)
		return true, nil
	}
	if !m.newer(k, max(j.ModifyIndex, ev.Index)) {
		return false, nil
	}
	stub := j.jobStub
	stub.ParameterizedJob = j.ParameterizedJob != nil && !j.Dispatched
	m.putJob(&stub)
	s.keepFullJob(&stub, raw)
	return true, nil
}

// keepFullJob caches the full job a managed job's event carries when it is
// a version the cache lacks, so classify need not read it (one read per
// submission and one per admission were most of a round's calls at
// scale). The payload is the job as Nomad stores it, the same JSON the
// job read returns.
func (s *Scheduler) keepFullJob(stub *jobStub, raw []byte) {
	if !s.managed(stub) || stub.Stop {
		return
	}
	if c := s.jobs[stub.ID]; c != nil && c.err == nil && c.index == stub.JobModifyIndex {
		return
	}
	var job api.Job
	if err := json.Unmarshal(raw, &job); err != nil || deref(job.JobModifyIndex) != stub.JobModifyIndex {
		return // fullJob reads it instead
	}
	s.cacheJob(&job)
}

func applyAlloc(m *mirror, ev *event, namespace string) (bool, error) {
	var a *api.Allocation
	err := decode(ev, "Allocation", &a)
	if err != nil || a == nil || a.ID == "" {
		return false, fmt.Errorf("allocation event at index %d: unreadable payload (%v)", ev.Index, err)
	}
	if a.Namespace != namespace || !m.newer(objKey{api.TopicAllocation, a.ID}, max(a.ModifyIndex, ev.Index)) {
		return false, nil
	}
	m.putAlloc(a.Stub())
	return true, nil
}

// applyNode keeps a node in the mirror while it is a usable caravan GPU
// node outside the queue pool, as a full reconcile would.
func (s *Scheduler) applyNode(m *mirror, ev *event) (bool, error) {
	var n *api.Node
	err := decode(ev, "Node", &n)
	if err != nil || n == nil || n.ID == "" {
		return false, fmt.Errorf("node event at index %d: unreadable payload (%v)", ev.Index, err)
	}
	k := objKey{api.TopicNode, n.ID}
	if ev.Type == "NodeDeregistration" {
		if !m.remove(k, ev.Index) {
			return false, nil
		}
		delete(m.nodes, n.ID)
		delete(m.nodeAt, n.ID)
		m.sets = nil
		return true, nil
	}
	if !m.newer(k, max(n.ModifyIndex, ev.Index)) {
		return false, nil
	}
	return m.setNode(n, s.nodeInfo(n)), nil
}
