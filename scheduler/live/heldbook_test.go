package live

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
	"time"
)

// refBook is the held book's reference: every round, the GPUs every
// entry holds are noted with the round's time (forgotten after
// fingerprintLag) and newGPUBook sums every entry's held GPUs afresh.
type refBook struct{ touched map[gpuKey]time.Time }

func (r *refBook) book(nodes map[string]*nodeInfo, es []*entry, now time.Time) *gpuBook {
	for _, e := range es {
		for _, t := range e.held {
			r.touched[gpuKey{t.NodeID, t.GPU}] = now
		}
	}
	for k, at := range r.touched {
		if now.Sub(at) > fingerprintLag {
			delete(r.touched, k)
		}
	}
	return newGPUBook(nodes, es, func(node string, gpu int) bool {
		_, recent := r.touched[gpuKey{node, gpu}]
		return !recent
	})
}

// heldWorld is a random cluster and job list that the test changes the
// ways a live scheduler sees them change.
type heldWorld struct {
	rng   *rand.Rand
	nodes map[string]*nodeInfo
	es    []*entry
	book  *heldBook
}

func (w *heldWorld) node(id string, gpus int, mem int64) *nodeInfo {
	n := &nodeInfo{ID: id}
	for i := 0; i < gpus; i++ {
		free := []float64{0, 0.25, 0.5, 1}[w.rng.Intn(4)]
		n.GPUs = append(n.GPUs, nodeGPU{Index: i, MemoryMiB: mem, FreeFraction: free, FreeMemMiB: int64(free * float64(mem))})
	}
	return n
}

// held is a random placement, sometimes on a node that is not usable
// (not in nodes) or on a GPU index the node lacks.
func (w *heldWorld) held() []target {
	if w.rng.Intn(5) == 0 {
		return nil
	}
	var ts []target
	for k := 1 + w.rng.Intn(3); k > 0; k-- {
		t := target{NodeID: fmt.Sprintf("n%d", w.rng.Intn(7)), GPU: w.rng.Intn(5)}
		switch w.rng.Intn(4) {
		case 0:
			t.Fraction = 1 // whole GPU: all its memory
		case 1:
			t.Fraction, t.MemMiB = 0.3, 3000
		case 2:
			t.Fraction, t.MemMiB = 0.1, 1000
		default:
			t.Fraction, t.MemMiB = 0.25, 2048
		}
		ts = append(ts, t)
	}
	return ts
}

// step changes the world as one round's events would.
func (w *heldWorld) step() {
	for k := w.rng.Intn(4); k > 0; k-- {
		switch op := w.rng.Intn(6); {
		case op == 0 || len(w.es) == 0: // a new job
			w.es = append(w.es, &entry{held: w.held()})
		case op == 1: // refresh rebuilt an entry (its held a new slice)
			i := w.rng.Intn(len(w.es))
			w.book.drop(w.es[i])
			e := &entry{held: append([]target(nil), w.es[i].held...)}
			if w.rng.Intn(2) == 0 {
				e.held = w.held()
			}
			w.es[i] = e
		case op == 2: // a job gone
			i := w.rng.Intn(len(w.es))
			w.book.drop(w.es[i])
			w.es = append(w.es[:i], w.es[i+1:]...)
		case op == 3: // requeued unplaced: held cleared in place
			w.es[w.rng.Intn(len(w.es))].held = nil
		case op == 4: // a node event that moved only free capacity
			id := fmt.Sprintf("n%d", w.rng.Intn(7))
			if n := w.nodes[id]; n != nil {
				c := *n
				c.GPUs = append([]nodeGPU(nil), n.GPUs...)
				c.GPUs[0].FreeFraction, c.GPUs[0].FreeMemMiB = 1, c.GPUs[0].MemoryMiB
				w.nodes[id] = &c
			}
		default: // a node goes, comes back or changes its GPUs
			id := fmt.Sprintf("n%d", w.rng.Intn(7))
			if w.nodes[id] != nil && w.rng.Intn(2) == 0 {
				delete(w.nodes, id)
			} else {
				w.nodes[id] = w.node(id, 2+w.rng.Intn(3), []int64{8192, 16384}[w.rng.Intn(2)])
			}
		}
	}
}

// TestHeldBookMatchesRebuild runs random rounds in which jobs come, go,
// are rebuilt and requeued and nodes change, go and come back, and
// requires the held book's round book to be newGPUBook's with the old
// per-round notes of touched GPUs: the same sums (up to float order) and
// the same GPUs whose fingerprint is trusted.
func TestHeldBookMatchesRebuild(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		w := &heldWorld{rng: rand.New(rand.NewSource(seed)), nodes: map[string]*nodeInfo{}, book: newHeldBook()}
		for i := 0; i < 5; i++ {
			id := fmt.Sprintf("n%d", i)
			w.nodes[id] = w.node(id, 4, 16384)
		}
		ref := &refBook{touched: map[gpuKey]time.Time{}}
		now := time.Unix(1_000_000, 0)
		for round := 0; round < 300; round++ {
			w.step()
			now = now.Add(time.Duration(w.rng.Intn(40)) * time.Second)
			full := w.rng.Intn(25) == 0
			got := w.book.book(w.nodes, w.es, now, full)
			want := ref.book(w.nodes, w.es, now)
			if err := sameBook(got, want); err != nil {
				t.Fatalf("seed %d round %d (full %v): %v", seed, round, full, err)
			}
			// the round's admissions go into its book, whose storage the
			// next round reuses: they must not show there
			if len(w.es) > 0 {
				got.commit(w.es[w.rng.Intn(len(w.es))].held)
			}
		}
	}
}

func sameBook(got, want *gpuBook) error {
	if len(got.used) != len(want.used) {
		return fmt.Errorf("%d nodes booked, want %d", len(got.used), len(want.used))
	}
	for id, ws := range want.used {
		gs := got.used[id]
		if len(gs) != len(ws) {
			return fmt.Errorf("node %s: %d GPUs, want %d", id, len(gs), len(ws))
		}
		for i := range ws {
			if math.Abs(gs[i].Fraction-ws[i].Fraction) > 1e-12 || gs[i].MemMiB != ws[i].MemMiB {
				return fmt.Errorf("node %s GPU %d: %+v, want %+v", id, i, gs[i], ws[i])
			}
		}
	}
	return nil
}

// TestHeldBookRoundIsItsOwn: what a round commits into its book (its
// admissions) is not kept for the next round, whose sums come from the
// entries alone.
func TestHeldBookRoundIsItsOwn(t *testing.T) {
	h := newHeldBook()
	nodes := map[string]*nodeInfo{"n": {ID: "n", GPUs: []nodeGPU{{MemoryMiB: 8192, FreeFraction: 1, FreeMemMiB: 8192}}}}
	e := &entry{held: []target{{NodeID: "n", GPU: 0, Fraction: 0.5, MemMiB: 4096}}}
	now := time.Unix(1000, 0)
	l := h.book(nodes, []*entry{e}, now, false)
	l.commit([]target{{NodeID: "n", GPU: 0, Fraction: 0.5, MemMiB: 4096}})
	if u := l.used["n"][0]; u.Fraction != 1 || u.MemMiB != 8192 {
		t.Fatalf("round book after a commit: %+v", u)
	}
	l = h.book(nodes, []*entry{e}, now.Add(time.Second), false)
	if u := l.used["n"][0]; u.Fraction != 0.5 || u.MemMiB != 4096 {
		t.Fatalf("next round's book: %+v, want the entry's half GPU only", u)
	}
	h.drop(e)
	l = h.book(nodes, nil, now.Add(2*time.Second), false)
	if u := l.used["n"][0]; u.Fraction != 0 || u.MemMiB != 0 {
		t.Fatalf("after the job went, within the fingerprint lag: %+v, want nothing (the fingerprint is not trusted yet)", u)
	}
}
