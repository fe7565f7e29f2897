package live

import (
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
)

// metrics are the scheduler's Prometheus series, rendered by hand in the
// text exposition format (the client library is not a dependency here).
type metrics struct {
	rounds, admissions, preemptions atomic.Int64
	admitAttempts, conflicts        atomic.Int64
	errors                          atomic.Int64
	progressPoints, progressBad     atomic.Int64
	badPlacements                   atomic.Int64
	roundSeconds, waitSeconds       summary
}

func newMetrics() *metrics { return &metrics{} }

// summary is a Prometheus summary without quantiles: sum and count.
type summary struct {
	mu         sync.Mutex
	sum        float64
	count      int64
	maxSeen    float64
	hasMaxSeen bool
}

func (s *summary) observe(v float64) {
	if math.IsNaN(v) || v < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sum += v
	s.count++
	if !s.hasMaxSeen || v > s.maxSeen {
		s.maxSeen, s.hasMaxSeen = v, true
	}
}

func (s *summary) read() (sum float64, count int64, maxSeen float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sum, s.count, s.maxSeen
}

// write renders every series; v gives the gauges of the latest round.
func (m *metrics) write(w io.Writer, v *QueueView, leader bool) {
	counter := func(name, help string, n int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, n)
	}
	gauge := func(name, help string, x float64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %g\n", name, help, name, name, x)
	}
	sum := func(name, help string, s *summary) {
		total, n, mx := s.read()
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s summary\n%s_sum %g\n%s_count %d\n", name, help, name, name, total, name, n)
		gauge(name+"_max", "Largest observation of "+name+".", mx)
	}
	counter("caravan_scheduler_rounds_total", "Scheduling rounds run.", m.rounds.Load())
	counter("caravan_scheduler_admissions_total", "Jobs admitted into a real node pool.", m.admissions.Load())
	counter("caravan_scheduler_admit_attempts_total", "Admissions started (read of the job done).", m.admitAttempts.Load())
	counter("caravan_scheduler_preemptions_total", "Jobs preempted back to the queue.", m.preemptions.Load())
	counter("caravan_scheduler_cas_conflicts_total", "Rewrites refused because the job changed (check-and-set).", m.conflicts.Load())
	counter("caravan_scheduler_errors_total", "Failed Nomad operations.", m.errors.Load())
	counter("caravan_scheduler_progress_points_total", "Progress lines read from running tasks.", m.progressPoints.Load())
	counter("caravan_scheduler_bad_placements_total", "Stored placements (job meta or state) that could not be read.", m.badPlacements.Load())
	counter("caravan_scheduler_progress_bad_lines_total", "Malformed progress lines skipped.", m.progressBad.Load())
	sum("caravan_scheduler_round_seconds", "Duration of a scheduling round.", &m.roundSeconds)
	sum("caravan_scheduler_admission_wait_seconds", "Time from first sight to admission.", &m.waitSeconds)
	b := 0.0
	if leader {
		b = 1
	}
	gauge("caravan_scheduler_leader", "1 if this instance holds the scheduler lock.", b)
	var queued, running float64
	for _, j := range v.Jobs {
		switch j.State {
		case "queued":
			queued++
		case "running":
			running++
		}
	}
	gauge("caravan_scheduler_queued_jobs", "Jobs waiting in the queue pool.", queued)
	gauge("caravan_scheduler_running_jobs", "Jobs admitted and not finished.", running)
}
