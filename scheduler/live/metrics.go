package live

import (
	"math"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the scheduler's Prometheus series, in one registry per
// scheduler (GET /metrics).
type metrics struct {
	reg                                        *prometheus.Registry
	rounds, admissions, preemptions            prometheus.Counter
	admitAttempts, conflicts, errors           prometheus.Counter
	progressPoints, progressBad, badPlacements prometheus.Counter
	eventsApplied, eventsIgnored, reconciles   prometheus.Counter
	parks, pacedGCs, pacedGCSeconds            prometheus.Counter
	awaitingPlacement                          prometheus.Gauge
	apiCalls                                   *prometheus.CounterVec // by call
	roundSeconds, waitSeconds, roundCalls      prometheus.Histogram
	// stageSeconds is where rounds spend their time (round.go's stages).
	stageSeconds *prometheus.CounterVec
}

// newMetrics registers every series; the gauges read the latest round's
// view and the leader flag when scraped.
func newMetrics(view func() *QueueView, leader func() bool) *metrics {
	reg := prometheus.NewRegistry()
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
		reg.MustRegister(c)
		return c
	}
	histogram := func(name, help string, buckets []float64) prometheus.Histogram {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
		reg.MustRegister(h)
		return h
	}
	gauge := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
	}
	m := &metrics{
		reg:            reg,
		rounds:         counter("caravan_scheduler_rounds_total", "Scheduling rounds run."),
		admissions:     counter("caravan_scheduler_admissions_total", "Jobs admitted into a real node pool."),
		admitAttempts:  counter("caravan_scheduler_admit_attempts_total", "Admissions started (read of the job done)."),
		preemptions:    counter("caravan_scheduler_preemptions_total", "Jobs preempted back to the queue."),
		conflicts:      counter("caravan_scheduler_cas_conflicts_total", "Rewrites refused because the job changed (check-and-set)."),
		errors:         counter("caravan_scheduler_errors_total", "Failed Nomad operations."),
		progressPoints: counter("caravan_scheduler_progress_points_total", "Progress lines read from running tasks."),
		progressBad:    counter("caravan_scheduler_progress_bad_lines_total", "Malformed progress lines skipped."),
		badPlacements:  counter("caravan_scheduler_bad_placements_total", "Stored placements (job meta or state) that could not be read."),
		eventsApplied:  counter("caravan_scheduler_events_applied_total", "Nomad events that changed the scheduler's mirror of the cluster."),
		eventsIgnored:  counter("caravan_scheduler_events_ignored_total", "Nomad events ignored: duplicated, older than the mirror, or of no concern."),
		reconciles:     counter("caravan_scheduler_full_reconciles_total", "Full reads of jobs, allocations, pools and nodes (start, broken stream, lag, period)."),
		parks:          counter("caravan_scheduler_parks_total", "Queued jobs parked in their real pool behind the park constraint (park.go)."),
		pacedGCs:       counter("caravan_scheduler_paced_gc_total", "Garbage collections run between rounds, before the next round would start one (internal/gcpace)."),
		pacedGCSeconds: counter("caravan_scheduler_paced_gc_seconds_total", "Wall time of the collections run between rounds."),
		roundCalls: histogram("caravan_scheduler_round_api_calls", "Nomad API calls made by one scheduling round.",
			[]float64{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096}),
		roundSeconds: histogram("caravan_scheduler_round_seconds", "Duration of a scheduling round.", roundBuckets),
		waitSeconds: histogram("caravan_scheduler_admission_wait_seconds", "Time from submission to admission.",
			prometheus.ExponentialBuckets(0.5, 2, 18)),
	}
	m.stageSeconds = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "caravan_scheduler_round_stage_seconds_total",
		Help: "Seconds scheduling rounds spent per stage: observe, classify, decide (the policy), apply (Nomad writes), save (state); between rounds, learn (finished jobs fed to the policy) and idle (the policy readying memory)."},
		[]string{"stage"})
	reg.MustRegister(m.stageSeconds)
	m.apiCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "caravan_scheduler_api_calls_total",
		Help: "Nomad API calls made by scheduling rounds and their background writes, by call (the event stream and progress reads aside)."},
		[]string{"call"})
	reg.MustRegister(m.apiCalls)
	m.awaitingPlacement = prometheus.NewGauge(prometheus.GaugeOpts{Name: "caravan_scheduler_awaiting_placement_jobs",
		Help: "Admitted jobs Nomad has not placed yet, as the latest round counted them (bounded by -max-unplaced)."})
	reg.MustRegister(m.awaitingPlacement)
	gauge("caravan_scheduler_leader", "1 if this instance holds the scheduler lock.", func() float64 {
		if leader() {
			return 1
		}
		return 0
	})
	gauge("caravan_scheduler_queued_jobs", "Jobs waiting in the queue pool.", func() float64 { return countState(view(), "queued") })
	gauge("caravan_scheduler_running_jobs", "Jobs admitted and not finished.", func() float64 { return countState(view(), "running") })
	return m
}

// roundBuckets double up to 128 ms, then step by half as much again to
// 4 s: a round p99 between 0.5 and 1 s (the latency goal at scale) shows
// which side of 1 s it lies on, which doubling buckets could not.
var roundBuckets = []float64{0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
	0.192, 0.256, 0.384, 0.512, 0.768, 1, 1.5, 2, 3, 4, 8, 16, 32}

// observe records a duration, ignoring what cannot be one.
func observe(h prometheus.Histogram, v float64) {
	if !math.IsNaN(v) && v >= 0 {
		h.Observe(v)
	}
}

func countState(v *QueueView, state string) float64 {
	n := 0.0
	if v == nil {
		return n
	}
	for _, j := range v.Jobs {
		if j.State == state {
			n++
		}
	}
	return n
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
