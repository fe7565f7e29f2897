package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
)

// ModelConfig describes one served model.
type ModelConfig struct {
	SLO      time.Duration // default deadline (default 500ms)
	MaxQueue int           // admitted but not dispatched (default 4096)
	Limits   Limits
	Policy   PolicyConfig
	// Features: whether the model's cost depends on input_len/max_tokens;
	// false ("static") buckets every request alike.
	Features bool
}

func (c ModelConfig) withDefaults() ModelConfig {
	if c.SLO <= 0 {
		c.SLO = 500 * time.Millisecond
	}
	if c.MaxQueue <= 0 {
		c.MaxQueue = 4096
	}
	c.Limits = c.Limits.withDefaults()
	c.Policy = c.Policy.withDefaults()
	return c
}

type workerState struct {
	w        Worker
	busy     bool
	failedAt time.Time
	listed   bool // in the latest discovery set
}

type workerSet struct {
	ws  []Worker
	ack chan struct{}
}

type batchDone struct {
	w       *workerState
	batch   []*pending
	key     Key
	lat     time.Duration
	outputs []json.RawMessage
	err     error
}

// modelQueue is one model's queue, distributions and workers, owned by one
// goroutine (run): arrivals, completions and worker changes are events.
type modelQueue struct {
	name    string
	cfg     ModelConfig
	policy  Policy
	dists   *Dists
	m       *metrics
	log     hclog.Logger
	in      chan *pending
	done    chan batchDone
	setW    chan workerSet
	queue   []*pending
	workers map[string]*workerState
	// tick is how often hopeless requests are looked for between events.
	tick     time.Duration
	cooldown time.Duration
}

const retryCooldown = 2 * time.Second

func (q *modelQueue) run(ctx context.Context) {
	t := time.NewTicker(q.tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			q.failAll(OutcomeNoWorkers, "front end shutting down")
			return
		case p := <-q.in:
			q.queue = append(q.queue, p)
		case bd := <-q.done:
			q.finishBatch(bd)
		case ws := <-q.setW:
			q.setWorkers(ws.ws)
			close(ws.ack)
		case <-t.C:
		}
		q.schedule(ctx)
	}
}

// schedule asks the policy for drops and, while a worker is idle, batches.
func (q *modelQueue) schedule(ctx context.Context) {
	q.queue = slices.DeleteFunc(q.queue, (*pending).answered)
	for len(q.queue) > 0 {
		now := time.Now()
		if q.usable(now) == 0 {
			q.failAll(OutcomeNoWorkers, "no worker serves this model")
			return
		}
		idle := q.idleWorker(now)
		items := make([]Item, len(q.queue))
		for i, p := range q.queue {
			items[i] = p.item
		}
		start := time.Now()
		dec := q.policy.Decide(now, items, q.dists, idle != nil)
		q.m.decision.WithLabelValues(q.name, q.policy.Name()).Observe(time.Since(start).Seconds())
		take := map[int]bool{}
		for _, i := range dec.Drop {
			take[i] = true
			q.answer(q.queue[i], OutcomeUnmeetable, "cannot meet its deadline; answered early", nil, "", 0)
		}
		var batch []*pending
		if idle != nil {
			for _, i := range dec.Batch {
				if !take[i] {
					take[i] = true
					batch = append(batch, q.queue[i])
				}
			}
		}
		q.queue = removeIdx(q.queue, take)
		if len(batch) == 0 {
			return
		}
		q.dispatch(ctx, idle, batch, now)
	}
}

// removeIdx drops the marked indexes, keeping order, in place.
func removeIdx[T any](ps []T, take map[int]bool) []T {
	out := ps[:0]
	for i, p := range ps {
		if !take[i] {
			out = append(out, p)
		}
	}
	clear(ps[len(out):])
	return out
}

func (q *modelQueue) dispatch(ctx context.Context, w *workerState, batch []*pending, now time.Time) {
	w.busy = true
	items := make([]WorkItem, len(batch))
	last := now
	maxIn, maxOut := 0, 0
	for i, p := range batch {
		p.sent(now)
		items[i] = p.workItem()
		last = maxTime(last, p.item.Deadline)
		maxIn, maxOut = max(maxIn, p.item.In), max(maxOut, p.item.Out)
		q.m.queueDelay.WithLabelValues(q.name).Observe(now.Sub(p.item.Arrival).Seconds())
	}
	q.m.batchSize.WithLabelValues(q.name).Observe(float64(len(batch)))
	key := q.key(len(batch), maxIn, maxOut)
	// Past the last deadline nothing in the batch can be met; a worker
	// that has not answered by then (plus a grace) is treated as failed.
	rctx, cancel := context.WithDeadline(ctx, last.Add(time.Second))
	go func() {
		defer cancel()
		start := time.Now()
		out, err := w.w.Run(rctx, q.name, items)
		q.done <- batchDone{w: w, batch: batch, key: key, lat: time.Since(start), outputs: out, err: err}
	}()
}

func (q *modelQueue) key(n, in, out int) Key {
	if !q.cfg.Features {
		in, out = 0, 0
	}
	return KeyFor(n, in, out)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// finishBatch answers a batch's requests: met only if done by the deadline.
func (q *modelQueue) finishBatch(bd batchDone) {
	bd.w.busy = false
	if !bd.w.listed {
		delete(q.workers, bd.w.w.Addr())
	}
	now := time.Now()
	if bd.err != nil {
		q.workerFailed(bd, now)
		return
	}
	q.dists.Observe(bd.key, bd.lat)
	q.m.batchTime.WithLabelValues(q.name).Observe(bd.lat.Seconds())
	for i, p := range bd.batch {
		if now.After(p.item.Deadline) {
			q.answer(p, OutcomeExceeded, "served after its deadline; result discarded", nil, bd.w.w.Addr(), len(bd.batch))
			continue
		}
		q.answer(p, OutcomeOK, "", bd.outputs[i], bd.w.w.Addr(), len(bd.batch))
	}
}

// workerFailed puts the batch back in the queue when another worker can
// still serve it in time (the policy then decides), else fails it at once.
func (q *modelQueue) workerFailed(bd batchDone, now time.Time) {
	bd.w.failedAt = now
	q.log.Warn("worker failed a batch", "model", q.name, "worker", bd.w.w.Addr(), "batch", len(bd.batch), "error", bd.err)
	retry := q.usable(now) > 0
	for _, p := range bd.batch {
		if p.answered() {
			continue
		}
		p.tries++
		if retry && p.tries < 3 && now.Before(p.item.Deadline) {
			p.sent(time.Time{})
			q.queue = append(q.queue, p)
			continue
		}
		q.answer(p, OutcomeWorkerFailed, "worker failed: "+bd.err.Error(), nil, bd.w.w.Addr(), len(bd.batch))
	}
}

// usable counts listed workers not cooling down after a failure.
func (q *modelQueue) usable(now time.Time) int {
	n := 0
	for _, w := range q.workers {
		if w.listed && now.Sub(w.failedAt) >= q.cooldown {
			n++
		}
	}
	return n
}

func (q *modelQueue) idleWorker(now time.Time) *workerState {
	var best *workerState
	for _, w := range q.workers {
		if w.listed && !w.busy && now.Sub(w.failedAt) >= q.cooldown {
			if best == nil || w.w.Addr() < best.w.Addr() {
				best = w
			}
		}
	}
	return best
}

// setWorkers follows discovery: new workers join, vanished ones stop
// getting batches (a batch in flight on one finishes or fails by itself).
func (q *modelQueue) setWorkers(ws []Worker) {
	seen := map[string]bool{}
	for _, w := range ws {
		seen[w.Addr()] = true
		if cur, ok := q.workers[w.Addr()]; ok {
			cur.listed = true
			continue
		}
		q.workers[w.Addr()] = &workerState{w: w, listed: true}
		q.log.Info("worker added", "model", q.name, "worker", w.Addr())
	}
	for addr, w := range q.workers {
		if !seen[addr] {
			w.listed = false
			if !w.busy {
				delete(q.workers, addr)
			}
			q.log.Info("worker removed", "model", q.name, "worker", addr)
		}
	}
	q.m.workers.WithLabelValues(q.name).Set(float64(len(seen)))
}

func (q *modelQueue) failAll(o Outcome, detail string) {
	for _, p := range q.queue {
		q.answer(p, o, detail, nil, "", 0)
	}
	q.queue = q.queue[:0]
}

func (q *modelQueue) answer(p *pending, o Outcome, detail string, out json.RawMessage, worker string, batch int) {
	q.m.answer(q.name, p, o, detail, out, worker, batch)
}

// answer delivers one outcome, if nobody answered first, and counts it.
func (m *metrics) answer(model string, p *pending, o Outcome, detail string, out json.RawMessage, worker string, batch int) {
	if !p.answer() {
		return
	}
	now := time.Now()
	if o == OutcomeOK && now.After(p.item.Deadline) {
		o, detail, out = OutcomeExceeded, "served after its deadline; result discarded", nil
	}
	m.requests.WithLabelValues(model, string(o)).Inc()
	if o == OutcomeOK {
		m.latency.WithLabelValues(model).Observe(now.Sub(p.item.Arrival).Seconds())
	}
	p.done <- p.response(o, detail, out, worker, batch, now)
}

func (q *modelQueue) String() string { return fmt.Sprintf("model %s (%s)", q.name, q.policy.Name()) }
