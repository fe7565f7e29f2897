package order

import "github.com/caravan-dl/caravan/scheduler/policy"

// LAS is Tiresias' 2D-LAS: attained service is GPUs × executed time
// (Job.Attained), discretised into priority queues; FIFO inside a queue.
// It needs no knowledge of job durations.
//
// Inside a queue running jobs rank ahead of queued ones, as in Tiresias
// where pending jobs are moved behind running ones after every round, so a
// job is only preempted by a job from a higher queue. Queued jobs keep FIFO
// order by the time they (re)joined the queue (QueuedSince, else Submit).
type LAS struct {
	q  *queues
	sc scratch
	cr changeRanked
}

// NewLAS builds 2D-LAS; the zero config gives Tiresias' defaults.
func NewLAS(cfg QueueConfig) (*LAS, error) {
	q, err := newQueues(cfg)
	if err != nil {
		return nil, err
	}
	l := &LAS{q: q}
	l.sc.kc.mv = q.mover()
	return l, nil
}

// Name is "tiresias-las".
func (*LAS) Name() string { return "tiresias-las" }

// Preemptive is true: a job of a higher queue preempts lower ones.
func (*LAS) Preemptive() bool { return true }

// Queues is the number of priority queues.
func (l *LAS) Queues() int { return l.q.Queues() }

// Order ranks by queue, then running before queued, then queue-join time.
func (o *LAS) Order(s *policy.Snapshot) []policy.Ranked {
	var ks []keyed
	if o.q.plain() { // service is Attained: one pass over the jobs
		key := func(j *policy.Job) keyed {
			a, _ := j.ServiceAt(s.Now)
			return keyed{job: j, queue: int32(o.q.queueOf(a)), k: [3]float64{stateTie(j), queuedAt(j)}}
		}
		if out, ok := o.cr.rank(s, &o.sc, key); ok {
			return out
		}
		ks = o.sc.keysOf(s, key)
	} else {
		o.cr.general()
		js := o.sc.active(s)
		svc := o.q.update(s.Now, js)
		ks = o.sc.keys(len(js))
		for i, j := range js {
			ks[i] = keyed{job: j, queue: int32(o.q.queueOf(svc[i])), k: [3]float64{stateTie(j), queuedAt(j)}}
		}
	}
	// between consecutive events few keys change: re-rank only those
	return o.sc.sortFor(ks, s.SubmitOrdered)
}
