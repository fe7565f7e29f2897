package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestDueAtTheEarliestTrigger(t *testing.T) {
	h := heap{marked: 100, goal: 200} // trigger at 100 + 0.7·100 = 170
	for _, c := range []struct {
		now, next uint64
		want      bool
	}{
		{now: 100, next: 0, want: false},
		{now: 150, next: 9, want: false},  // 150 + 18 < 170
		{now: 150, next: 10, want: true},  // 150 + 20 = 170
		{now: 175, next: 0, want: true},   // past it already
		{now: 120, next: 100, want: true}, // a big round coming
	} {
		h.now = c.now
		if got := due(h, c.next, 2); got != c.want {
			t.Errorf("now %d, next %d: due = %v, want %v", c.now, c.next, got, c.want)
		}
	}
	if due(heap{marked: 100, now: 1 << 40}, 0, 2) {
		t.Error("a runtime without a goal must never force a collection")
	}
}

var sink []byte

// churn allocates n bytes of garbage in 256 KiB pieces.
func churn(n int) {
	for ; n > 0; n -= 256 << 10 {
		sink = make([]byte, 256<<10)
	}
	sink = nil
}

func cycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// ballast holds 64 MiB live under GOGC=100 and collects, so the trigger
// is at least ~45 MiB of allocation away; keep the result alive.
func ballast(t *testing.T) [][]byte {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	return live
}

// TestIdleCollectsOnlyNearTheTrigger: small rounds are left to the
// runtime, and a round that would cross the trigger next time is
// collected at the idle point.
func TestIdleCollectsOnlyNearTheTrigger(t *testing.T) {
	live := ballast(t)
	p := New(Config{})
	if p.Idle() {
		t.Fatal("collected right after a collection")
	}
	for i := 0; i < 4; i++ { // 1 MiB rounds: 2 MiB expected, far from the trigger
		churn(1 << 20)
		if p.Idle() {
			t.Fatalf("round %d: collected with the heap far from the trigger", i)
		}
	}
	c0 := cycles()
	churn(20 << 20) // now +~24 MiB, expecting 2 × 20 more: past the trigger
	if !p.Idle() {
		t.Fatal("did not collect before a round that would cross the trigger")
	}
	if cycles() <= c0 || p.Collections() != 1 || p.Spent() <= 0 {
		t.Fatalf("collections %d, spent %v, cycles %d → %d", p.Collections(), p.Spent(), c0, cycles())
	}
	runtime.KeepAlive(live)
}

func TestOffNeverCollects(t *testing.T) {
	p := New(Config{Off: true})
	churn(8 << 20)
	if p.Idle() || p.Collections() != 0 {
		t.Fatal("an Off pacer collected")
	}
}

// TestBackgroundCollectsWithoutWaiting: Idle returns at once, and the
// collection finishes on its own goroutine and is reported.
func TestBackgroundCollectsWithoutWaiting(t *testing.T) {
	live := ballast(t)
	done := make(chan time.Duration, 4)
	p := New(Config{Background: true, Collected: func(d time.Duration) { done <- d }})
	p.Idle()
	churn(20 << 20)
	if !p.Idle() {
		t.Fatal("did not start a collection before a round that would cross the trigger")
	}
	select {
	case d := <-done:
		if d <= 0 || p.Collections() != 1 || p.Spent() != d {
			t.Fatalf("collected in %v; counted %d, %v", d, p.Collections(), p.Spent())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the background collection never finished")
	}
	runtime.KeepAlive(live)
}
