package split

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Held, Run still runs every part exactly once, over its own range,
// and returns only when all are done, whether the helpers take the
// pass or (another pass holding them) it runs as when nothing is held.
func TestHeldRunVisitsEveryItemOnce(t *testing.T) {
	release := Hold()
	defer release()
	var wg sync.WaitGroup
	for g := range 3 { // concurrent passes: one shares the helpers at a time
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, n := range []int{2, 7, 100, 1001, 50000} {
				for _, k := range []int{2, 3, 16} {
					checkPass(t, n, k, g+2)
				}
			}
		}()
	}
	wg.Wait()
}

// checkPass runs one pass of n items in k parts on up to g goroutines
// and fails unless every part and item ran once, and all before Run
// returned.
func checkPass(t *testing.T, n, k, g int) {
	seen := make([]atomic.Int32, n)
	ran := make([]atomic.Int32, k)
	Run(n, k, g, func(part, lo, hi int) {
		ran[part].Add(1)
		if wlo, whi := Range(part, k, n); lo != wlo || hi != whi {
			t.Errorf("n=%d k=%d: part %d is [%d,%d), want [%d,%d)", n, k, part, lo, hi, wlo, whi)
		}
		for i := lo; i < hi; i++ {
			seen[i].Add(1)
		}
	})
	for p := range ran {
		if c := ran[p].Load(); c != 1 {
			t.Errorf("n=%d k=%d: part %d ran %d times", n, k, p, c)
		}
	}
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("n=%d k=%d: item %d visited %d times", n, k, i, c)
		}
	}
}

// While held, the helpers take parts, also after they parked for want
// of one (the next pass kicks them): a pass whose first part waits for
// another to start completes, and the helpers' count grows. Released,
// the helpers take no more.
func TestHoldHelpersTakeParts(t *testing.T) {
	if Procs() < 2 {
		t.Skip("one processor: Hold does nothing")
	}
	release := Hold()
	time.Sleep(4 * spinFor) // the helpers park
	before := hot.helped.Load()
	for range 200 { // bounded: a helper the OS never ran in 200 passes fails the test
		var started atomic.Int32
		Run(4, 2, Procs(), func(part, lo, hi int) {
			started.Add(1)
			deadline := time.Now().Add(2 * time.Millisecond)
			for started.Load() < 2 && time.Now().Before(deadline) {
			}
		})
		if hot.helped.Load() > before {
			break
		}
	}
	if hot.helped.Load() == before {
		t.Fatal("held helpers took no part of 200 passes")
	}
	release()
	release() // a release is idempotent
	if h := hot.holds.Load(); h != 0 {
		t.Fatalf("holds = %d after release, want 0", h)
	}
	time.Sleep(time.Millisecond) // let the helpers see it
	after := hot.helped.Load()
	for range 20 {
		checkPass(t, 1000, 4, Procs())
	}
	if hot.helped.Load() != after {
		t.Fatal("helpers took parts after the last release")
	}
}

// Holds nest: the helpers spin until the last is released.
func TestHoldsNest(t *testing.T) {
	if Procs() < 2 {
		t.Skip("one processor: Hold does nothing")
	}
	r1, r2 := Hold(), Hold()
	r1()
	if hot.holds.Load() != 1 {
		t.Fatalf("holds = %d with one of two released, want 1", hot.holds.Load())
	}
	r2()
	if hot.holds.Load() != 0 {
		t.Fatalf("holds = %d with both released, want 0", hot.holds.Load())
	}
}

// BenchmarkPass times a pass of two parts (a sum over 2^20 ints) after
// as much serial work, with the helpers started per pass (cold) and
// held: the gap between the two is the helper's wake-up.
func BenchmarkPass(b *testing.B) {
	xs := make([]int, 1<<20)
	for i := range xs {
		xs[i] = i
	}
	var sums [2]int
	serial := func() (s int) {
		for _, x := range xs {
			s += x
		}
		return s
	}
	for _, held := range []bool{false, true} {
		name := "cold"
		if held {
			name = "held"
		}
		b.Run(name, func(b *testing.B) {
			if held {
				defer Hold()()
			}
			for b.Loop() {
				sums[0] = serial()
				Run(len(xs), 2, Procs(), func(p, lo, hi int) {
					s := 0
					for _, x := range xs[lo:hi] {
						s += x
					}
					sums[p] = s
				})
			}
		})
	}
}
