//go:build unix

package scalebench

import (
	"fmt"
	"os"
	"sync"
)

// Two builds compared on this host run minutes apart, and its speed
// moves by a quarter between runs of one build (the policy README's
// forty-fourth round): a run of 30 decisions cannot show a change of a
// few per cent. Paired, two benchmark processes (say the build before a
// change and after it) take turns (CARAVAN_SCALE_PAIR_WAIT and
// CARAVAN_SCALE_PAIR_PASS, two FIFOs each opens, crossed): each waits
// for a token before each decision and passes it on after the work that
// follows it, so only one runs at a time, both meet the host's same
// minutes, and decision i of one is timed next to decision i of the
// other (the same snapshot: the churn is seeded). pair.sh runs such a
// pair and compares the decisions one by one.
type pairGate struct {
	wait, pass *os.File
	buf        [1]byte
}

var (
	pairOnce sync.Once
	pairG    *pairGate
)

// pairing is the process's gate, nil when it does not run paired.
func pairing() *pairGate {
	pairOnce.Do(func() {
		w, p := os.Getenv("CARAVAN_SCALE_PAIR_WAIT"), os.Getenv("CARAVAN_SCALE_PAIR_PASS")
		if w == "" || p == "" {
			return
		}
		// read-write: opening a FIFO so never blocks on the other end
		wf, err := os.OpenFile(w, os.O_RDWR, 0)
		if err != nil {
			panic(fmt.Sprintf("scalebench: pair: %v", err))
		}
		pf, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			panic(fmt.Sprintf("scalebench: pair: %v", err))
		}
		pairG = &pairGate{wait: wf, pass: pf}
	})
	return pairG
}

// turn waits for this process's turn (nothing when not paired).
func (g *pairGate) turn() {
	if g == nil {
		return
	}
	if _, err := g.wait.Read(g.buf[:]); err != nil {
		panic(fmt.Sprintf("scalebench: pair: %v", err))
	}
}

// done passes the turn on (nothing when not paired).
func (g *pairGate) done() {
	if g == nil {
		return
	}
	if _, err := g.pass.Write(g.buf[:]); err != nil {
		panic(fmt.Sprintf("scalebench: pair: %v", err))
	}
}
