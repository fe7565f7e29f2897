package serve

import (
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"
)

// pending is one admitted request. Whoever first moves state from waiting
// to answered (the dispatcher with a result or a drop, the HTTP handler at
// the deadline or on cancel) decides the outcome; the other side does nothing.
type pending struct {
	item  Item
	req   Request
	state atomic.Bool // true once answered
	done  chan Response
	tries int // the dispatcher's alone
	// queued is how long the request waited before it last left in a batch
	// (at least 1 ns; 0 while queued). Atomic: the dispatcher writes it, and
	// the HTTP handler that answers at the deadline reads it while the batch
	// may still run.
	queued atomic.Int64
}

func newPending(seq uint64, now time.Time, slo time.Duration, req Request) *pending {
	return &pending{
		item: Item{Seq: seq, Arrival: now, Deadline: now.Add(slo), In: req.InputLen, Out: req.MaxTokens},
		req:  req,
		done: make(chan Response, 1),
	}
}

func (p *pending) workItem() WorkItem {
	id := p.req.ID
	if id == "" {
		id = strconv.FormatUint(p.item.Seq, 10)
	}
	return WorkItem{ID: id, Tokens: p.req.Tokens, InputLen: p.req.InputLen, MaxTokens: p.req.MaxTokens}
}

// answer claims the request; false if it was already answered.
func (p *pending) answer() bool { return p.state.CompareAndSwap(false, true) }

func (p *pending) answered() bool { return p.state.Load() }

// response builds the client's answer at time now.
func (p *pending) response(o Outcome, detail string, out json.RawMessage, worker string, batch int, now time.Time) Response {
	r := Response{ID: p.req.ID, Status: o, Detail: detail, Output: out, Worker: worker, Batch: batch,
		TotalMS: msOf(now.Sub(p.item.Arrival))}
	if q := p.queued.Load(); q != 0 {
		r.QueueMS = msOf(time.Duration(q))
	}
	return r
}

// sent records that the request left in a batch at t; the zero time puts it
// back in the queue.
func (p *pending) sent(t time.Time) {
	if t.IsZero() {
		p.queued.Store(0)
		return
	}
	p.queued.Store(int64(max(t.Sub(p.item.Arrival), 1)))
}
