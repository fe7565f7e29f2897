package live

import (
	"errors"
	"time"
)

// maxReason bounds the caravan.reason meta value.
const maxReason = 240

// reasonFor says why a queued job still waits.
func reasonFor(e *entry, waiting map[string]string) string {
	switch {
	case e.job == nil:
		return "not read yet"
	case e.job.err != nil:
		return "invalid: " + e.job.err.Error()
	case waiting[e.stub.ID] != "":
		return waiting[e.stub.ID]
	case e.allocs.draining > 0:
		return "preempted; checkpointing before it can be resumed"
	}
	return "waiting for the next scheduling round"
}

// explain writes the reason into the job's meta, so `nomad job status`
// shows it. Every write is a job version, so it happens only when the
// reason changed, at most once per ReasonInterval per job, with CAS; a
// conflict just waits for the next round. It reports whether it wrote
// (or tried to).
func (s *Scheduler) explain(e *entry, reason string, now time.Time) bool {
	if len(reason) > maxReason {
		reason = reason[:maxReason-3] + "..."
	}
	if e.stub.Meta[MetaReason] == reason {
		return false
	}
	if r := e.rec; r.ReasonAt > 0 && unix(now)-r.ReasonAt < s.cfg.ReasonInterval.Seconds() {
		return false
	}
	job, err := s.readJob(e.stub.ID, e.stub.JobModifyIndex)
	if err == nil {
		setMeta(job, MetaReason, reason)
		_, err = s.register(job, e.stub.JobModifyIndex)
	}
	switch {
	case errors.Is(err, errConflict):
		s.poke()
	case err != nil:
		s.log.Warn("cannot write reason", "job", e.stub.ID, "error", err)
	default:
		e.rec.ReasonAt = unix(now)
	}
	return true
}
