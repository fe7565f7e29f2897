package serve

import (
	"slices"
	"testing"
	"time"
)

var t0 = time.Unix(1000, 0)

// handDists: short requests (1 token in, 1 out) take 10 ms alone and 12 ms
// in pairs; a long one (64 out) takes 100 ms alone, 110 ms with company.
func handDists() *Dists {
	d := NewDists(8)
	d.Observe(KeyFor(1, 1, 1), 10*ms)
	d.Observe(KeyFor(2, 1, 1), 12*ms)
	d.Observe(KeyFor(1, 1, 64), 100*ms)
	d.Observe(KeyFor(2, 1, 64), 110*ms)
	d.Observe(KeyFor(4, 1, 64), 120*ms)
	return d
}

func item(seq uint64, deadline time.Duration, out int) Item {
	return Item{Seq: seq, Arrival: t0, Deadline: t0.Add(deadline), In: 1, Out: out}
}

func mustPolicy(t *testing.T, name string, c PolicyConfig) Policy {
	t.Helper()
	p, err := NewPolicy(name, c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Two short requests due in 50 ms and a long one due in 300 ms.
// Orloj, anchored on the short ones: batch of one scores 1/10ms = 100/s, the
// pair 2/12ms = 167/s. Anchored on the long one: alone it meets 1 but lets
// both short ones die (deaths at 40 ms < 100 ms): (1-2)/100ms < 0; with a
// short one (110 ms) the short one misses. So the pair goes first.
func TestOrlojPicksShortPair(t *testing.T) {
	q := []Item{item(1, 300*ms, 64), item(2, 50*ms, 1), item(3, 50*ms, 1)}
	dec := mustPolicy(t, "orloj", PolicyConfig{MaxBatch: 4}).Decide(t0, q, handDists(), true)
	if len(dec.Drop) != 0 {
		t.Errorf("dropped %v, want none", dec.Drop)
	}
	if slices.Sort(dec.Batch); !slices.Equal(dec.Batch, []int{1, 2}) {
		t.Errorf("batch %v, want the two short requests [1 2]", dec.Batch)
	}
}

// Clockwork sees one estimate per batch size: p99 of {10, 100} = 100 ms for
// batches of one, so it drops the short requests that Orloj serves.
func TestClockworkDropsWhatItCannotTell(t *testing.T) {
	q := []Item{item(1, 300*ms, 64), item(2, 50*ms, 1), item(3, 50*ms, 1)}
	dec := mustPolicy(t, "clockwork", PolicyConfig{MaxBatch: 4}).Decide(t0, q, handDists(), true)
	if !slices.Equal(dec.Drop, []int{1, 2}) {
		t.Errorf("dropped %v, want [1 2]", dec.Drop)
	}
	// Batch sizes: p99(b=1)=100ms, only one live request left.
	if !slices.Equal(dec.Batch, []int{0}) {
		t.Errorf("batch %v, want [0]", dec.Batch)
	}
}

// Clockwork: largest batch whose estimate meets the earliest deadline, EDF.
func TestClockworkLargestFeasibleBatch(t *testing.T) {
	d := NewDists(8)
	d.Observe(KeyFor(1, 0, 0), 10*ms)
	d.Observe(KeyFor(2, 0, 0), 15*ms)
	d.Observe(KeyFor(4, 0, 0), 30*ms)
	q := []Item{item(1, 100*ms, 0), item(2, 20*ms, 0), item(3, 25*ms, 0), item(4, 5*ms, 0)}
	dec := mustPolicy(t, "clockwork", PolicyConfig{MaxBatch: 8}).Decide(t0, q, d, true)
	// Request 3 (due 5 ms) cannot make it alone (10 ms): dropped. EDF of the
	// rest: 1 (20ms), 2 (25ms), 0 (100ms); size 2 takes 15 ms <= 20, size 3
	// (bucket 4) takes 30 > 20.
	if !slices.Equal(dec.Drop, []int{3}) || !slices.Equal(dec.Batch, []int{1, 2}) {
		t.Errorf("got drop %v batch %v, want drop [3] batch [1 2]", dec.Drop, dec.Batch)
	}
}

func TestFIFOFixedBatchDropsOnlyExpired(t *testing.T) {
	q := []Item{item(1, -1*ms, 0), item(2, 1*ms, 0), item(3, 900*ms, 0), item(4, 900*ms, 0)}
	dec := mustPolicy(t, "fifo", PolicyConfig{MaxBatch: 2}).Decide(t0, q, handDists(), true)
	if !slices.Equal(dec.Drop, []int{0}) || !slices.Equal(dec.Batch, []int{1, 2}) {
		t.Errorf("got drop %v batch %v, want drop [0] batch [1 2]", dec.Drop, dec.Batch)
	}
}

// Orloj drops a request whose chance alone is below MinProb: a long one due
// in 50 ms never finishes in under 100 ms.
func TestOrlojDropsHopeless(t *testing.T) {
	q := []Item{item(1, 50*ms, 64), item(2, 50*ms, 1)}
	dec := mustPolicy(t, "orloj", PolicyConfig{}).Decide(t0, q, handDists(), false)
	if !slices.Equal(dec.Drop, []int{0}) || dec.Batch != nil {
		t.Errorf("got drop %v batch %v, want drop [0], no batch", dec.Drop, dec.Batch)
	}
}

// Probabilities: a short request due in 15 ms, when short batches of one
// take 10 ms half the time and 20 ms otherwise, has p_alone 0.5 and is kept.
// Paired, the pair distribution (30 ms) gives it 0, so Orloj sends it alone.
func TestOrlojUsesProbabilities(t *testing.T) {
	d := NewDists(8)
	d.Observe(KeyFor(1, 1, 1), 10*ms)
	d.Observe(KeyFor(1, 1, 1), 20*ms)
	d.Observe(KeyFor(2, 1, 1), 30*ms)
	q := []Item{item(1, 15*ms, 1), item(2, 15*ms, 1)}
	dec := mustPolicy(t, "orloj", PolicyConfig{}).Decide(t0, q, d, true)
	// alone: met 0.5 in mean 15ms, the other dies (death 15-10=5ms): (0.5-0.5)/15ms = 0.
	// pair: met 0 in 30 ms: 0. Ties keep the smaller batch.
	if len(dec.Drop) != 0 || !slices.Equal(dec.Batch, []int{0}) {
		t.Errorf("got drop %v batch %v, want batch [0]", dec.Drop, dec.Batch)
	}
}

func TestNewPolicyUnknown(t *testing.T) {
	if _, err := NewPolicy("nexus", PolicyConfig{}); err == nil {
		t.Fatal("unknown policy accepted")
	}
}
