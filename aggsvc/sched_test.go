package aggsvc

import (
	"sync"
	"testing"
)

// TestSchedulerBurstCannotStarve: with one core busy, job A queues a burst of
// 100 tasks, then job B queues one; B runs before all but a couple of A's.
func TestSchedulerBurstCannotStarve(t *testing.T) {
	s := newScheduler(1, nil)
	defer s.close()
	a, b := s.newQueue("a", 1), s.newQueue("b", 1)
	var mu sync.Mutex
	var order []string
	gate := make(chan struct{})
	s.submit(a, 1, func() { <-gate })
	var wg sync.WaitGroup
	wg.Add(101)
	for range 100 {
		s.submit(a, 1000, func() { mu.Lock(); order = append(order, "a"); mu.Unlock(); wg.Done() })
	}
	s.submit(b, 1000, func() { mu.Lock(); order = append(order, "b"); mu.Unlock(); wg.Done() })
	close(gate)
	wg.Wait()
	for i, o := range order {
		if o == "b" {
			if i > 2 {
				t.Fatalf("b ran after %d of a's burst", i)
			}
			return
		}
	}
	t.Fatal("b never ran")
}

// TestSchedulerWeights: two backlogged jobs weighted 3:1 share the pool in
// that ratio while both have work.
func TestSchedulerWeights(t *testing.T) {
	s := newScheduler(1, nil)
	defer s.close()
	heavy, light := s.newQueue("heavy", 3), s.newQueue("light", 1)
	gate := make(chan struct{})
	s.submit(light, 1, func() { <-gate })
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	for range 200 {
		for _, q := range []*jobQueue{heavy, light} {
			wg.Add(1)
			s.submit(q, 100, func() { mu.Lock(); order = append(order, q.name); mu.Unlock(); wg.Done() })
		}
	}
	close(gate)
	wg.Wait()
	h := 0
	for _, o := range order[:200] {
		if o == "heavy" {
			h++
		}
	}
	if h < 145 || h > 155 {
		t.Fatalf("heavy got %d of the first 200 tasks, want about 150 (3:1)", h)
	}
}
