package live

import (
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// learnFinished feeds a learning policy the jobs that finished (each
// once, policy.FinishObserver) and lets it prepare its next decision
// (policy.Preparer), after the round: what it derives from them (lucid's
// refit re-ranks every queued job, ~7 ms at 10,000 nodes × 100,000 jobs)
// then runs while the loop waits for the next event, not in the next
// round's decision. A round's decisions see its finished jobs gone, as
// before; the model learns from them one round later (the debounce, 200
// ms by default), as if their events had come that much later. Its time
// is the "learn" stage of caravan_scheduler_round_stage_seconds_total,
// outside the round's duration.
func (s *Scheduler) learnFinished() {
	start := time.Now()
	_, learns := s.pol.(policy.FinishObserver)
	var fin []*policy.Job
	for _, e := range s.finished {
		if e.rec.learnt {
			continue
		}
		e.rec.learnt = true
		if !learns {
			continue
		}
		if j := s.policyJob(e); j != nil {
			fin = append(fin, j)
		}
	}
	clear(s.finished)
	s.finished = s.finished[:0]
	if len(fin) > 0 {
		policy.LearnBetween(s.pol, fin)
		s.metrics.stageSeconds.WithLabelValues("learn").Add(time.Since(start).Seconds())
	}
}
