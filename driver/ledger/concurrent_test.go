package ledger

import (
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentAdmit races many goroutines for one node's GPUs: exactly
// as many tasks as fit are admitted, and nothing is over-committed.
func TestConcurrentAdmit(t *testing.T) {
	l, path := openTemp(t, devices(1000, 1000))
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("t%d", i)
			if _, err := l.Admit(id, Request{Fraction: 0.25}); err == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			}
			_ = l.Usage()
			_ = l.Grants(id)
		}(i)
	}
	wg.Wait()
	if ok != 8 {
		t.Errorf("%d tasks admitted, want 8", ok)
	}
	for _, u := range l.Usage() {
		if u.Tasks != 4 || u.UsedMiB != 1000 {
			t.Errorf("usage %+v, want 4 tasks and all memory", u)
		}
	}
	r, err := Open(path, devices(1000, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.All()) != 8 {
		t.Errorf("reopened ledger has %d grants, want 8", len(r.All()))
	}
}
