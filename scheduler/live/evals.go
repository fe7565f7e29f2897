package live

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
)

// The mirror follows which evaluations Nomad has still to run (pending, in
// its broker), so that the unplaced check (unplaced.go) knows without a
// read that an admitted job with no allocation is waiting on Nomad, not
// unplaceable. At 1,000 nodes × 10,000 jobs caravan admitted faster than
// Nomad's workers evaluate: admitted jobs waited minutes in the broker,
// past PlaceTimeout, and reading each one's evaluations (22,278 reads in
// one run, 16 a round) is what kept round p99 over 1 s. Full reconciles
// list the pending evaluations; the Evaluation topic keeps them current.

// evalStub is what the mirror needs of an evaluation.
type evalStub struct {
	ID, Namespace, JobID, Status string
	JobModifyIndex, ModifyIndex  uint64
}

// setEval records an evaluation's status: pending ones are kept per job
// with the job version they evaluate, any other status drops it.
func (m *mirror) setEval(ev *evalStub) {
	if ev.Status != "pending" {
		if p := m.pending[ev.JobID]; p != nil {
			delete(p, ev.ID)
			if len(p) == 0 {
				delete(m.pending, ev.JobID)
			}
		}
		return
	}
	if m.pending[ev.JobID] == nil {
		m.pending[ev.JobID] = map[string]uint64{}
	}
	m.pending[ev.JobID][ev.ID] = ev.JobModifyIndex
}

// evalPending reports whether Nomad has an evaluation of the job at
// version index (or later) it has not run yet.
func (m *mirror) evalPending(job string, index uint64) bool {
	for _, at := range m.pending[job] {
		if at >= index {
			return true
		}
	}
	return false
}

// applyEval folds an Evaluation event into the mirror.
func applyEval(m *mirror, ev *event, namespace string) (bool, error) {
	var e *evalStub
	err := decode(ev, "Evaluation", &e)
	if err != nil || e == nil || e.ID == "" || e.JobID == "" {
		return false, fmt.Errorf("evaluation event at index %d: unreadable payload (%v)", ev.Index, err)
	}
	if e.Namespace != namespace || !m.newer(objKey{api.TopicEvaluation, e.ID}, max(e.ModifyIndex, ev.Index)) {
		return false, nil
	}
	m.setEval(e)
	return true, nil
}

// readPendingEvals lists the namespace's pending evaluations.
func (s *Scheduler) readPendingEvals(q *api.QueryOptions) ([]*evalStub, uint64, error) {
	var evals []*evalStub
	s.call("reconcile evaluations")
	qm, err := s.api.Raw().Query("/v1/evaluations?status=pending", &evals, q)
	if err != nil {
		return nil, 0, fmt.Errorf("list pending evaluations: %w", err)
	}
	return evals, qm.LastIndex, nil
}

// setEvals records the pending evaluations a full reconcile listed.
func (m *mirror) setEvals(evals []*evalStub, at uint64) {
	m.listed[api.TopicEvaluation] = at
	for _, e := range evals {
		m.seen[objKey{api.TopicEvaluation, e.ID}] = e.ModifyIndex
		m.setEval(e)
	}
}
