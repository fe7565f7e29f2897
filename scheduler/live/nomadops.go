package live

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// errConflict means the job changed since the scheduler read it: a user
// update (or another writer) wins, and the job is re-read and re-decided.
var errConflict = errors.New("job changed since it was read")

// readJob reads a job fresh and checks it is still at the decided index.
func (s *Scheduler) readJob(id string, index uint64) (*api.Job, error) {
	s.call("job read")
	job, _, err := s.api.Jobs().Info(id, &api.QueryOptions{Namespace: s.cfg.Namespace})
	if err != nil {
		return nil, err
	}
	if deref(job.JobModifyIndex) != index {
		return nil, errConflict
	}
	return job, nil
}

// jobToRewrite is a copy of the job to rewrite: the full job classify
// cached when it is at the stub's index (the check-and-set register still
// refuses it if the job changed since), else a fresh read. Reading it
// again for every admission was half of a round's API calls at scale.
func (s *Scheduler) jobToRewrite(e *entry) (*api.Job, error) {
	if job := cachedCopy(e); job != nil {
		return job, nil
	}
	return s.readJob(e.stub.ID, e.stub.JobModifyIndex)
}

// cachedCopy is a copy of e's cached full job when it is the stub's
// version, else nil.
func cachedCopy(e *entry) *api.Job {
	if c := e.job; c != nil && c.job != nil && c.err == nil && c.index == e.stub.JobModifyIndex {
		if job, err := copyJob(c.job); err == nil {
			return job
		}
	}
	return nil
}

// copyJob deep-copies a job as read from the HTTP API (JSON both ways, so
// nothing the API returned is lost).
func copyJob(j *api.Job) (*api.Job, error) {
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	var out api.Job
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// register writes job only if nobody changed it since index; the next
// round waits until it sees the write.
func (s *Scheduler) register(job *api.Job, index uint64) (uint64, error) {
	idx, err := s.put(job, index)
	if err == nil {
		s.noteWrite(idx)
	}
	return idx, err
}

// put is register without the wait: for writes no decision depends on
// (parks), so a round never waits for the event stream to show them.
func (s *Scheduler) put(job *api.Job, index uint64) (uint64, error) {
	s.call("job register")
	resp, _, err := s.api.Jobs().RegisterOpts(job, &api.RegisterOptions{EnforceIndex: true, ModifyIndex: index},
		&api.WriteOptions{Namespace: s.cfg.Namespace})
	if err != nil {
		if strings.Contains(err.Error(), "conflicting job modify index") {
			return 0, errConflict
		}
		return 0, err
	}
	return resp.JobModifyIndex, nil
}

// stopAllocs stops a job's allocations that are still meant to run.
func (s *Scheduler) stopAllocs(id string) (int, error) {
	q := &api.QueryOptions{Namespace: s.cfg.Namespace}
	s.call("job allocations")
	allocs, _, err := s.api.Jobs().Allocations(id, false, q)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range allocs {
		if a.DesiredStatus != "run" || !live(a) {
			continue
		}
		s.call("alloc stop")
		resp, err := s.api.Allocations().Stop(&api.Allocation{ID: a.ID, Namespace: a.Namespace}, q)
		if err != nil {
			return n, err
		}
		s.noteWrite(resp.LastIndex)
		n++
	}
	return n, nil
}
