package live

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

var garbage []byte

// TestCollectionsRunBetweenRounds: after a round that allocated enough
// that the next one would probably start a collection, the loop starts
// one on its own goroutine and counts it when done; with NoGCPacing it
// leaves that to the runtime.
func TestCollectionsRunBetweenRounds(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	live := make([][]byte, 64) // 64 MiB live: the trigger is ≥ 45 MiB away
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	for _, off := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Token, cfg.NoGCPacing = "secret", off
		s, err := New(cfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		s.collectBetweenRounds() // the first round's end: nothing known yet
		for n := 0; n < 24<<20; n += 256 << 10 {
			garbage = make([]byte, 256<<10) // a round allocating 24 MiB
		}
		garbage = nil
		s.collectBetweenRounds()
		for i := 0; i < 3000 && !off && counterValue(s.metrics.pacedGCs) == 0; i++ {
			time.Sleep(10 * time.Millisecond) // the collection runs on its own goroutine
		}
		got := counterValue(s.metrics.pacedGCs)
		if off && got != 0 || !off && got < 1 { // (tests running beside this one allocate too)
			t.Errorf("NoGCPacing=%v: %v paced collections", off, got)
		}
		if secs := counterValue(s.metrics.pacedGCSeconds); (got > 0) != (secs > 0) {
			t.Errorf("NoGCPacing=%v: %v collections took %v s", off, got, secs)
		}
	}
	runtime.KeepAlive(live)
}
