package order

import (
	"fmt"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// QueueConfig is Tiresias' discretised priority queues.
//
// Mapping of the defaults: Tiresias' simulator (jobs.py) sets
// num_queue = 3 and queue_limit = [3250, 7200, 18000] GPU-seconds, and
// dlas_sim_jobs demotes a job from queue k only for k < num_queue−1 when
// its attained service reaches queue_limit[k]. So with 3 queues:
//
//	Q0: attained < 3250 GPU·s
//	Q1: 3250 ≤ attained < 7200
//	Q2: attained ≥ 7200 (the last queue is unbounded)
//
// and 18000 is only used when Queues is raised to 4 (Q2 then ends at
// 18000 and Q3 is unbounded). We keep all three numbers so that raising
// Queues reproduces Tiresias' four-queue example.
type QueueConfig struct {
	Queues int       // default 3
	Limits []float64 // GPU-seconds; default [3250, 7200, 18000]
	// PromoteKnob: a queued job that has waited at least PromoteKnob ×
	// its executed time since its last promotion goes back to Q0 with its
	// attained service counted from zero. 0 disables it, which is the
	// default of Tiresias' dlas-gpu run (solve_starvation = 0); the
	// simulator's dlas-gpu-N variants use N ∈ {0.5,1,2,4,8,...}.
	PromoteKnob float64
}

// DefaultQueueConfig is Tiresias' simulator default.
func DefaultQueueConfig() QueueConfig {
	return QueueConfig{Queues: 3, Limits: []float64{3250, 7200, 18000}}
}

func (c QueueConfig) withDefaults() QueueConfig {
	d := DefaultQueueConfig()
	if c.Queues == 0 {
		c.Queues = d.Queues
	}
	if c.Limits == nil {
		c.Limits = d.Limits
	}
	return c
}

// Validate reports a configuration that cannot form queues.
func (c QueueConfig) Validate() error {
	c = c.withDefaults()
	if c.Queues < 1 {
		return fmt.Errorf("queues must be ≥ 1, got %d", c.Queues)
	}
	if len(c.Limits) < c.Queues-1 {
		return fmt.Errorf("%d queues need %d limits, got %d", c.Queues, c.Queues-1, len(c.Limits))
	}
	for i := 0; i < c.Queues-1; i++ {
		if c.Limits[i] <= 0 || (i > 0 && c.Limits[i] <= c.Limits[i-1]) {
			return fmt.Errorf("queue limits must be positive and increasing, got %v", c.Limits)
		}
	}
	if c.PromoteKnob < 0 {
		return fmt.Errorf("promote knob must be ≥ 0, got %g", c.PromoteKnob)
	}
	return nil
}

// queues tracks per-job promotion baselines: after a promotion, service
// is counted from the baseline, as Tiresias resets executed_time.
type queues struct {
	cfg  QueueConfig
	base map[string]baseline
	svc  []policy.Seconds // update's result, reused
}

type baseline struct{ attained, executed policy.Seconds }

func newQueues(cfg QueueConfig) (*queues, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &queues{cfg: cfg.withDefaults(), base: map[string]baseline{}}, nil
}

// queueOf maps attained service to a queue index.
func (q *queues) queueOf(a policy.Seconds) int {
	for k := 0; k < q.cfg.Queues-1; k++ {
		if !reached(a, q.cfg.Limits[k]) {
			return k
		}
	}
	return q.cfg.Queues - 1
}

// update applies starvation promotions, forgets departed jobs and returns
// each job's service: the attained GPU-seconds counted for queueing. It
// looks each job's baseline up once, and builds the set of live jobs only
// when some baseline may belong to a departed job.
func (q *queues) update(now policy.Seconds, js []*policy.Job) []policy.Seconds {
	svc := grow(q.svc, len(js))
	q.svc = svc
	if q.plain() {
		for i, j := range js {
			svc[i], _ = j.ServiceAt(now)
		}
		return svc
	}
	based := 0 // jobs of js that have a baseline after this update
	for i, j := range js {
		b, ok := q.base[j.ID]
		a, ex := j.ServiceAt(now)
		if q.starved(now, j, b) {
			b, ok = baseline{attained: a, executed: ex}, true
			q.base[j.ID] = b
		}
		if ok {
			based++
		}
		svc[i] = a - b.attained
	}
	if based < len(q.base) { // job IDs are unique, so some baseline is stale
		q.forget(js)
	}
	return svc
}

// plain reports that update would return each job's Attained and change
// nothing: no job was ever promoted, nor can be.
func (q *queues) plain() bool { return q.cfg.PromoteKnob <= 0 && len(q.base) == 0 }

// forget drops the baselines of jobs that are no longer active.
func (q *queues) forget(js []*policy.Job) {
	live := make(map[string]bool, len(js))
	for _, j := range js {
		live[j.ID] = true
	}
	for id := range q.base {
		if !live[id] {
			delete(q.base, id)
		}
	}
}

// starved is Tiresias' rule: queued, below Q0, has run since its last
// promotion (baseline b), and waited ≥ PromoteKnob × that run time.
func (q *queues) starved(now policy.Seconds, j *policy.Job, b baseline) bool {
	if q.cfg.PromoteKnob <= 0 || j.State != policy.Queued {
		return false
	}
	a, ex := j.ServiceAt(now)
	ran := ex - b.executed
	if ran <= 0 || q.queueOf(a-b.attained) == 0 {
		return false
	}
	return now-queuedAt(j) >= q.cfg.PromoteKnob*ran
}

// Queues reports the number of queues (used in Waiting messages).
func (q *queues) Queues() int { return q.cfg.Queues }
