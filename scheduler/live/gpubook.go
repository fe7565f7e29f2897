package live

import (
	"sort"
	"time"
)

// eps absorbs float error in summed fractions.
const eps = 1e-9

// use is what is committed on one GPU.
type use struct {
	Fraction float64
	MemMiB   int64
}

// gpuBook is the committed GPU capacity: caravan's own placements (running
// and draining) or, when higher, what the driver's fingerprint reports,
// which also covers tasks the scheduler does not manage. The fingerprint
// reaches the servers seconds late, so on a GPU caravan itself used
// recently (trusted says no) it would hold GPUs long after they are free:
// there only caravan's own book counts.
type gpuBook struct {
	nodes map[string]*nodeInfo
	used  map[string][]use
}

func newGPUBook(nodes map[string]*nodeInfo, es []*entry, trusted func(node string, gpu int) bool) *gpuBook {
	l := &gpuBook{nodes: nodes, used: map[string][]use{}}
	for id, n := range nodes {
		l.used[id] = make([]use, len(n.GPUs))
	}
	for _, e := range es {
		l.commit(e.held)
	}
	for id, n := range nodes {
		for i, g := range n.GPUs {
			if trusted != nil && !trusted(id, i) {
				continue
			}
			u := &l.used[id][i]
			u.Fraction = max(u.Fraction, 1-g.FreeFraction)
			u.MemMiB = max(u.MemMiB, g.MemoryMiB-g.FreeMemMiB)
		}
	}
	return l
}

// slotMem is what a target takes of a GPU's memory: a whole GPU takes all.
func (l *gpuBook) slotMem(t target) int64 { return slotMem(l.nodes[t.NodeID], t) }

func (l *gpuBook) commit(ts []target) {
	for _, t := range ts {
		if us := l.used[t.NodeID]; t.GPU >= 0 && t.GPU < len(us) {
			us[t.GPU].Fraction += t.Fraction
			us[t.GPU].MemMiB += l.slotMem(t)
		}
	}
}

// fits reports whether all targets fit together on what is free now.
func (l *gpuBook) fits(ts []target) bool {
	extra := map[[2]any]use{}
	for _, t := range ts {
		us := l.used[t.NodeID]
		if t.GPU < 0 || t.GPU >= len(us) {
			return false
		}
		k := [2]any{t.NodeID, t.GPU}
		e := extra[k]
		e.Fraction += t.Fraction
		e.MemMiB += l.slotMem(t)
		extra[k] = e
		total := l.nodes[t.NodeID].GPUs[t.GPU].MemoryMiB
		if us[t.GPU].Fraction+e.Fraction > 1+eps || us[t.GPU].MemMiB+e.MemMiB > total {
			return false
		}
	}
	return true
}

// nodeIDs lists the book's nodes in a stable order.
func (l *gpuBook) nodeIDs() []string {
	ids := make([]string, 0, len(l.nodes))
	for id := range l.nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// fingerprintLag is how long after caravan last held a GPU its driver
// fingerprint may still show that use.
const fingerprintLag = time.Minute
