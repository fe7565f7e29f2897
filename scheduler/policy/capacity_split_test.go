package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
)

// TestBigGangsSplitSameCapacity: committing and releasing gangs of
// hundreds of slots with resolve and the nodes' summaries cut into parts
// (resolve, apply, nodesChanged) leaves the capacity a serial Capacity leaves,
// bit for bit, with the same errors, the same change log, the same
// trial digest and the same recorded changes; and a victim's refs compare alike (victimRef.same).
func TestBigGangsSplitSameCapacity(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer SetSplitMin(SetSplitMin(1 << 30))
	cl := splitTestCluster(48, 8)
	cs := loggedCapacities(cl, 2)
	serial, parted := cs[0], cs[1]
	rng := rand.New(rand.NewPCG(3, 4))
	var held []Placement
	splits := 0
	for step := range 400 {
		var p Placement
		release := len(held) > 0 && rng.IntN(3) == 0
		if release {
			k := rng.IntN(len(held))
			p = held[k]
			held = append(held[:k], held[k+1:]...)
		} else {
			p = randomGang(rng, cl)
		}
		record := step%3 == 0 // a preemption trial's recording
		if record {
			serial.beginRecord()
			parted.beginRecord()
		}
		SetSplitMin(1 << 30)
		e1 := applyGang(serial, p, release)
		SetSplitMin(5)
		e2 := applyGang(parted, p, release)
		if fmt.Sprint(e1) != fmt.Sprint(e2) {
			t.Fatalf("step %d: serial %v, in parts %v", step, e1, e2)
		}
		if record {
			if d1, d2 := serial.endRecord(nil), parted.endRecord(nil); !reflect.DeepEqual(d1, d2) {
				t.Fatalf("step %d: recorded %d changes serially, %d in parts", step, len(d1), len(d2))
			}
		}
		if e1 == nil && !release {
			held = append(held, p)
		}
		if len(p.Slots) >= 10 {
			splits++
		}
		sameCapacity(t, step, serial, parted)
		vr := &victimRef{}
		vr.refs, vr.err = serial.resolve(p, nil)
		vr.shares = sharesOf(nil, p.Slots)
		SetSplitMin(1 << 30)
		want := vr.same(serial, p.Slots)
		SetSplitMin(5)
		if got := vr.same(serial, p.Slots); got != want {
			t.Fatalf("step %d: same %v serially, %v in parts", step, want, got)
		}
	}
	if splits == 0 {
		t.Fatal("no gang was large enough to be split")
	}
}

// applyGang commits or releases p on c.
func applyGang(c *Capacity, p Placement, release bool) error {
	if release {
		c.Release(p, 0.5)
		return nil
	}
	return c.Commit(p, 0.5)
}

// sameCapacity fails unless a and b hold the same state bit for bit.
func sameCapacity(t *testing.T, step int, a, b *Capacity) {
	t.Helper()
	if !reflect.DeepEqual(a.Nodes, b.Nodes) || a.wholeFree != b.wholeFree ||
		math.Float64bits(a.freeSum) != math.Float64bits(b.freeSum) ||
		!reflect.DeepEqual(a.sums, b.sums) || !reflect.DeepEqual(a.wholes, b.wholes) || !reflect.DeepEqual(a.maxes, b.maxes) ||
		!reflect.DeepEqual(a.changes.nodes, b.changes.nodes) || a.hash.a != b.hash.a || a.hash.b != b.hash.b {
		t.Fatalf("step %d: the capacities differ (free sum %v and %v)", step, a.freeSum, b.freeSum)
	}
}

// splitTestCluster is n nodes of g GPUs each.
func splitTestCluster(n, g int) *Cluster {
	cl := &Cluster{}
	for i := range n {
		node := Node{Name: fmt.Sprintf("n%03d", i), Rack: fmt.Sprintf("r%d", i/8), LinkGbps: 10}
		for k := range g {
			node.GPUs = append(node.GPUs, GPU{Index: k, Model: "sim", MemoryMiB: 16384})
		}
		cl.Nodes = append(cl.Nodes, node)
	}
	return cl
}

// randomGang is a gang over a random run of nodes, node by node or with
// its slots shuffled, of one share (some over-committing), now and then
// with a slot on a node or GPU that does not exist.
func randomGang(rng *rand.Rand, cl *Cluster) Placement {
	frac := []float64{0.125, 0.25, 0.5, 1, 0.3}[rng.IntN(5)]
	lo := rng.IntN(len(cl.Nodes))
	hi := lo + 1 + rng.IntN(len(cl.Nodes)-lo)
	var p Placement
	for i := lo; i < hi; i++ {
		for k := range cl.Nodes[i].GPUs {
			if rng.IntN(4) > 0 {
				p.Slots = append(p.Slots, Slot{Node: cl.Nodes[i].Name, GPU: k, Fraction: frac, MemMiB: 512})
			}
		}
	}
	switch rng.IntN(10) {
	case 0:
		rng.Shuffle(len(p.Slots), func(a, b int) { p.Slots[a], p.Slots[b] = p.Slots[b], p.Slots[a] })
	case 1: // two unknown slots: the first one's error is the gang's
		p.Slots = append([]Slot{{Node: "nowhere", GPU: 0, Fraction: frac}}, p.Slots...)
		p.Slots = append(p.Slots, Slot{Node: cl.Nodes[lo].Name, GPU: 99, Fraction: frac})
	case 2:
		p.Slots = append(p.Slots, Slot{Node: cl.Nodes[lo].Name, GPU: 99, Fraction: frac})
	}
	return p
}

// TestFloor0IsMax checks floor0 against math.Max(0, v) bit for bit on
// the values that differ in math.Max's special cases.
func TestFloor0IsMax(t *testing.T) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -1, 0.25, -0.25, math.Inf(1), math.Inf(-1), math.NaN(), math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64} {
		if got, want := floor0(v), math.Max(0, v); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("floor0(%v) = %v (%#x), math.Max gives %v (%#x)", v, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}

// TestApplyByGPURunsAsSlotBySlot: apply, which takes a GPU's consecutive
// slots as one run (its digest out before the first, in after the last),
// leaves every GPU, summary, total, digest and recorded change as
// applying the slots one by one does, serially and in parts, for packed
// gangs (up to four workers a GPU, now and then shuffled or with an
// unknown slot) committed and released, with a utilisation that rounds.
func TestApplyByGPURunsAsSlotBySlot(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer SetSplitMin(SetSplitMin(1 << 30))
	cl := splitTestCluster(48, 8)
	cs := loggedCapacities(cl, 3)
	ref, serial, parted := cs[0], cs[1], cs[2]
	rng := rand.New(rand.NewPCG(5, 6))
	var held []Placement
	runs := 0
	for step := range 300 {
		sign, p := -1.0, packedGang(rng, cl)
		if len(held) > 0 && rng.IntN(3) == 0 {
			k := rng.IntN(len(held))
			sign, p = 1, held[k]
			held = append(held[:k], held[k+1:]...)
		} else {
			held = append(held, p)
		}
		for i := 1; i < len(p.Slots); i++ {
			if p.Slots[i] == p.Slots[i-1] {
				runs++
			}
		}
		record := step%3 == 0
		for _, c := range cs {
			if record {
				c.beginRecord()
			}
		}
		refs, _ := ref.resolve(p, nil)
		applySlotBySlot(ref, p, refs, sign, 0.3)
		SetSplitMin(1 << 30)
		refs, _ = serial.resolve(p, nil)
		serial.apply(p, refs, sign, 0.3)
		SetSplitMin(5)
		refs, _ = parted.resolve(p, nil)
		parted.apply(p, refs, sign, 0.3)
		if record {
			want := ref.endRecord(nil)
			for _, c := range []*Capacity{serial, parted} {
				if got := c.endRecord(nil); !reflect.DeepEqual(got, want) {
					t.Fatalf("step %d: recorded %d changes, slot by slot %d", step, len(got), len(want))
				}
			}
		}
		sameCapacity(t, step, ref, serial)
		sameCapacity(t, step, ref, parted)
	}
	if runs == 0 {
		t.Fatal("no GPU took two slots in a row: the test exercises nothing")
	}
}

// packedGang is a gang over a random run of nodes with one to four
// workers of one share on each GPU it uses, in order or shuffled, now
// and then with an unknown slot.
func packedGang(rng *rand.Rand, cl *Cluster) Placement {
	frac := []float64{0.125, 0.25, 0.3}[rng.IntN(3)]
	lo := rng.IntN(len(cl.Nodes))
	hi := lo + 1 + rng.IntN(min(len(cl.Nodes)-lo, 8))
	var p Placement
	for i := lo; i < hi; i++ {
		for k := range cl.Nodes[i].GPUs {
			for range rng.IntN(5) {
				p.Slots = append(p.Slots, Slot{Node: cl.Nodes[i].Name, GPU: k, Fraction: frac, MemMiB: 512})
			}
		}
	}
	switch rng.IntN(8) {
	case 0:
		rng.Shuffle(len(p.Slots), func(a, b int) { p.Slots[a], p.Slots[b] = p.Slots[b], p.Slots[a] })
	case 1:
		p.Slots = append(p.Slots, Slot{Node: "nowhere", GPU: 0, Fraction: frac})
	}
	return p
}

// applySlotBySlot is apply written slot by slot, each slot's GPU taken
// out of the digest and put back on its own (the reference for apply's
// GPU runs), its nodes then changed in the order they first appear.
func applySlotBySlot(c *Capacity, p Placement, refs []slotRef, sign, util float64) {
	for i, rf := range refs {
		g, ni := rf.g, rf.ni
		if g == nil {
			continue
		}
		id, pos := c.gpuID(g, ni)
		c.hashOut(g, ni, id, pos)
		s := &p.Slots[i]
		g.Free = clamp01(g.Free + sign*s.Fraction)
		g.FreeMem = min(max(g.FreeMem+int64(sign)*s.MemMiB, 0), g.TotalMem)
		g.Util = math.Max(0, g.Util-sign*util)
		c.hashIn(g, id)
	}
	touched := c.touchedBy(refs)
	c.nodesChanged(touched)
	c.touched = touched[:0]
}

// loggedCapacities are n Capacities of cl that log their changes and
// keep the trial digest, as a Framework's do in a preemptive round.
func loggedCapacities(cl *Cluster, n int) []*Capacity {
	cs := make([]*Capacity, n)
	for i := range cs {
		cs[i] = NewCapacity(cl)
		cs[i].LogChanges()
		cs[i].hashOn()
	}
	return cs
}
