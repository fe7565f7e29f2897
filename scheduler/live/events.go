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
func (s *Scheduler) applyEvent(m *mirror, ev *api.Event) (bool, error) {
	m.index = max(m.index, ev.Index)
	switch ev.Topic {
	case api.TopicJob:
		return s.applyJob(m, ev)
	case api.TopicAllocation:
		return applyAlloc(m, ev, s.cfg.Namespace)
	case api.TopicNode:
		return s.applyNode(m, ev)
	}
	return false, nil
}

// decode reads the payload's key as the HTTP API's JSON. The api
// package's own accessors decode with mapstructure, which drops fields
// whose mapstructure tag differs from the JSON name (a job's NodePool).
func decode(ev *api.Event, key string, out any) error {
	v, ok := ev.Payload[key]
	if !ok {
		return fmt.Errorf("no %s in the payload", key)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// jobPayload is what the job list's stub holds, read from a full job.
type jobPayload struct {
	jobStub
	ParameterizedJob *struct{}
	Dispatched       bool
}

func (s *Scheduler) applyJob(m *mirror, ev *api.Event) (bool, error) {
	var j jobPayload
	if err := decode(ev, "Job", &j); err != nil || j.ID == "" {
		return false, fmt.Errorf("job event at index %d: unreadable payload (%v)", ev.Index, err)
	}
	if j.Namespace != s.cfg.Namespace {
		return false, nil
	}
	k := objKey{api.TopicJob, j.ID}
	if deleted, _ := ev.Payload["Deleted"].(bool); deleted {
		if !m.remove(k, ev.Index) {
			return false, nil
		}
		delete(m.jobs, j.ID)
		return true, nil
	}
	if !m.newer(k, max(j.ModifyIndex, ev.Index)) {
		return false, nil
	}
	stub := j.jobStub
	stub.ParameterizedJob = j.ParameterizedJob != nil && !j.Dispatched
	m.jobs[j.ID] = &stub
	return true, nil
}

func applyAlloc(m *mirror, ev *api.Event, namespace string) (bool, error) {
	var a *api.Allocation
	err := decode(ev, "Allocation", &a)
	if err != nil || a == nil || a.ID == "" {
		return false, fmt.Errorf("allocation event at index %d: unreadable payload (%v)", ev.Index, err)
	}
	if a.Namespace != namespace || !m.newer(objKey{api.TopicAllocation, a.ID}, max(a.ModifyIndex, ev.Index)) {
		return false, nil
	}
	m.allocs[a.ID] = a.Stub()
	return true, nil
}

// applyNode keeps a node in the mirror while it is a usable caravan GPU
// node outside the queue pool, as a full reconcile would.
func (s *Scheduler) applyNode(m *mirror, ev *api.Event) (bool, error) {
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
		m.sets = nil
		return true, nil
	}
	if !m.newer(k, max(n.ModifyIndex, ev.Index)) {
		return false, nil
	}
	delete(m.nodes, n.ID)
	if info := s.nodeInfo(n); info != nil {
		m.nodes[n.ID] = info
	}
	m.sets = nil
	return true, nil
}
