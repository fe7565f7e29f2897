//go:build unix

package scalebench

import (
	"os"
	"runtime"
	"sync"
	"time"
)

// A probe is a fixed piece of work timed between decisions
// (CARAVAN_SCALE_PROBE=1): what the host alone adds to a decision's
// tail. A decision's p99 is the slowest of a few dozen; on a shared VM
// the same work, repeated, is not the same wall time (steal, a
// neighbour's traffic), so a decision's p99 is read against the
// probe's, taken in the same minutes. The probe is every core's passes
// over a buffer of its own that its L2 cache holds, a little arithmetic
// per word, so that it leaves the decisions' data in the shared cache
// (with an 8 MB buffer a core, what it measured against would include
// what it evicted).
type probe struct {
	bufs  [][]uint64
	lat   []time.Duration
	sink  uint64
	mu    sync.Mutex
	words int
}

// probeWords is each core's buffer, 256 KB, and probeRounds the passes
// over it: ~5 ms of wall time on the hosts these figures come from,
// close to the decisions' p50s.
const (
	probeWords  = 1 << 15
	probeRounds = 128
)

// newProbe is a probe when CARAVAN_SCALE_PROBE=1, nil otherwise, its
// buffers written once so that no run of it meets a page fault.
func newProbe() *probe {
	if os.Getenv("CARAVAN_SCALE_PROBE") != "1" {
		return nil
	}
	p := &probe{words: probeWords}
	for range runtime.GOMAXPROCS(0) {
		p.bufs = append(p.bufs, make([]uint64, p.words))
	}
	p.run() // faults every page in, untimed
	return p
}

// time runs the probe once and records its wall time (nil: nothing).
func (p *probe) time() {
	if p == nil {
		return
	}
	t0 := time.Now()
	p.run()
	p.lat = append(p.lat, time.Since(t0))
}

// run is the fixed work: every core its own passes over its buffer.
func (p *probe) run() {
	var wg sync.WaitGroup
	for _, buf := range p.bufs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := passes(buf, probeRounds)
			p.mu.Lock()
			p.sink += x
			p.mu.Unlock()
		}()
	}
	wg.Wait()
}

// passes strides through buf rounds times, an LCG step and a store per
// word, and returns a word of it so that nothing is optimised away.
func passes(buf []uint64, rounds int) uint64 {
	x := uint64(1)
	for range rounds {
		for i := range buf {
			x = x*6364136223846793005 + 1442695040888963407
			buf[i] += x
		}
	}
	return buf[len(buf)/2]
}
