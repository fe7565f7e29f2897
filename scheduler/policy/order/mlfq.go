package order

import "github.com/caravan-dl/caravan/scheduler/policy"

// LASMLFQ is 2D-LAS with the in-queue rule of Tiresias' reference
// simulator (dlas_sim_jobs), a classic multi-level feedback queue: each
// queue is a list; a new job joins the end of Q0, a demoted (or promoted)
// job the end of its new queue, and after every round the jobs left
// waiting move behind the running ones, keeping their relative order. So a
// job just demoted into a queue ranks behind that queue's waiters, which
// may then preempt it, and a job preempted from a queue stays ahead of the
// jobs that were already waiting there.
//
// LAS, Caravan's default, differs in two ways: inside a queue every
// running job ranks ahead of every waiting one (a job is only preempted by
// a higher queue), and a preempted job waits behind the jobs that waited
// before it (FIFO by queue-join time).
type LASMLFQ struct {
	q     *queues
	lists [][]string             // per queue, job IDs in list order
	at    map[string]int         // the queue each listed job is in
	cur   map[string]*policy.Job // this call's active jobs, reused
	sc    scratch
	keep  []string
	wait  []string
}

// NewLASMLFQ builds 2D-LAS with the reference's queue discipline.
func NewLASMLFQ(cfg QueueConfig) (*LASMLFQ, error) {
	q, err := newQueues(cfg)
	if err != nil {
		return nil, err
	}
	return &LASMLFQ{q: q, lists: make([][]string, q.cfg.Queues), at: map[string]int{}, cur: map[string]*policy.Job{}}, nil
}

// Name is "tiresias-las-mlfq".
func (*LASMLFQ) Name() string { return "tiresias-las-mlfq" }

// Preemptive is true.
func (*LASMLFQ) Preemptive() bool { return true }

// Queues is the number of priority queues.
func (l *LASMLFQ) Queues() int { return l.q.Queues() }

// Order ranks by queue, then list position.
func (o *LASMLFQ) Order(s *policy.Snapshot) []policy.Ranked {
	js := o.sc.active(s)
	svc := o.q.update(s.Now, js)
	clear(o.cur)
	for _, j := range js {
		o.cur[j.ID] = j
	}
	for k := range o.lists {
		o.lists[k] = o.settle(o.lists[k])
	}
	for id := range o.at { // departed jobs
		if o.cur[id] == nil {
			delete(o.at, id)
		}
	}
	for i, j := range js { // arrivals first, as the reference
		if _, ok := o.at[j.ID]; !ok {
			o.join(j.ID, o.q.queueOf(svc[i]))
		}
	}
	for i, j := range js { // then demotions and promotions
		if k := o.q.queueOf(svc[i]); o.at[j.ID] != k {
			o.leave(j.ID)
			o.join(j.ID, k)
		}
	}
	out := o.sc.out[:0]
	for k, l := range o.lists {
		for _, id := range l {
			out = append(out, policy.Ranked{Job: o.cur[id], Queue: k})
		}
	}
	o.sc.out = out
	return out
}

// settle drops departed jobs from a list and moves the waiting ones behind
// the running ones, each in list order (the reference's end of round).
func (o *LASMLFQ) settle(l []string) []string {
	keep, wait := o.keep[:0], o.wait[:0]
	for _, id := range l {
		switch j := o.cur[id]; {
		case j == nil:
		case j.State == policy.Running:
			keep = append(keep, id)
		default:
			wait = append(wait, id)
		}
	}
	l = append(append(l[:0], keep...), wait...)
	o.keep, o.wait = keep, wait
	return l
}

func (o *LASMLFQ) join(id string, k int) {
	o.lists[k] = append(o.lists[k], id)
	o.at[id] = k
}

// leave removes id from its list (a demotion: rare next to the rounds).
func (o *LASMLFQ) leave(id string) {
	k := o.at[id]
	l := o.lists[k]
	for i, x := range l {
		if x == id {
			o.lists[k] = append(l[:i], l[i+1:]...)
			break
		}
	}
	delete(o.at, id)
}
