package serve

import (
	"sync"
	"testing"
	"time"
)

// The HTTP handler answers at the deadline while the dispatcher may be
// marking the same request sent (CI's race detector caught this once in
// TestLateServiceNeverCountsAsMet). Run under -race, this fails if the two
// sides share the send time without synchronisation.
func TestResponseWhileDispatching(t *testing.T) {
	t0 := time.Now()
	p := newPending(1, t0, time.Second, Request{ID: "a"})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			p.sent(t0.Add(time.Duration(i+1) * time.Millisecond))
			p.sent(time.Time{})
		}
		p.sent(t0.Add(7 * time.Millisecond))
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			if r := p.response(OutcomeExceeded, "", nil, "", 0, t0); r.QueueMS < 0 || r.QueueMS > 200 {
				t.Errorf("queue time %v ms, want 0..200", r.QueueMS)
			}
		}
	}()
	wg.Wait()
	if r := p.response(OutcomeOK, "", nil, "", 0, t0.Add(time.Second)); r.QueueMS != 7 {
		t.Errorf("queue time %v ms, want 7", r.QueueMS)
	}
}

// Sent at the arrival instant still reads as sent, with no time queued.
func TestSentAtArrivalIsSent(t *testing.T) {
	t0 := time.Now()
	p := newPending(1, t0, time.Second, Request{})
	p.sent(t0)
	if p.queued.Load() == 0 {
		t.Fatal("a request sent at its arrival reads as still queued")
	}
	if r := p.response(OutcomeOK, "", nil, "", 0, t0); r.QueueMS != 0 {
		t.Errorf("queue time %v ms, want 0", r.QueueMS)
	}
	p.sent(time.Time{})
	if p.queued.Load() != 0 {
		t.Error("a request put back in the queue reads as sent")
	}
}
