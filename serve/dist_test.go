package serve

import (
	"testing"
	"time"
)

const ms = time.Millisecond

func TestBucket(t *testing.T) {
	for in, want := range map[int]int{-3: 0, 0: 0, 1: 1, 2: 2, 3: 4, 4: 4, 5: 8, 1000: 1024} {
		if got := bucket(in); got != want {
			t.Errorf("bucket(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestSampleHandComputed(t *testing.T) {
	d := NewDists(4)
	k := KeyFor(1, 3, 3)
	for _, v := range []time.Duration{30, 10, 40, 20} {
		d.Observe(k, v*ms)
	}
	s := d.Lookup(k)
	cases := []struct {
		at   time.Duration
		want float64
	}{{5 * ms, 0}, {10 * ms, 0.25}, {25 * ms, 0.5}, {40 * ms, 1}, {time.Second, 1}}
	for _, c := range cases {
		if got := s.CDF(c.at); got != c.want {
			t.Errorf("CDF(%v) = %v, want %v", c.at, got, c.want)
		}
	}
	if q := s.Quantile(0.5); q != 20*ms {
		t.Errorf("median = %v, want 20ms", q)
	}
	if q := s.Quantile(0.99); q != 40*ms {
		t.Errorf("p99 = %v, want 40ms", q)
	}
	if m := s.Mean(); m != 25*ms {
		t.Errorf("mean = %v, want 25ms", m)
	}
	// Online update: a fifth observation evicts the oldest (30ms).
	d.Observe(k, 100*ms)
	if m := s.Mean(); m != (10+40+20+100)*ms/4 {
		t.Errorf("mean after eviction = %v, want 42.5ms", m)
	}
	if got := s.CDF(30 * ms); got != 0.5 {
		t.Errorf("CDF(30ms) after eviction = %v, want 0.5", got)
	}
	if d.ByBatch(1).Len() != 4 {
		t.Errorf("per-batch-size distribution holds %d, want 4 (window)", d.ByBatch(1).Len())
	}
}

func TestLookupBorrowsDominatingKey(t *testing.T) {
	d := NewDists(8)
	if d.Lookup(KeyFor(1, 1, 1)) != nil {
		t.Fatal("empty Dists returned a distribution")
	}
	d.Observe(KeyFor(1, 2, 2), 5*ms)    // dominated by the query
	d.Observe(KeyFor(4, 16, 16), 50*ms) // dominates, far
	d.Observe(KeyFor(2, 8, 8), 20*ms)   // dominates, nearest
	if got := d.Lookup(KeyFor(1, 4, 4)).Mean(); got != 20*ms {
		t.Errorf("borrowed mean %v, want 20ms (nearest dominating key)", got)
	}
	if got := d.Lookup(KeyFor(8, 64, 64)).Mean(); got != 50*ms {
		t.Errorf("nothing dominates: borrowed %v, want 50ms (nearest)", got)
	}
	if got := d.ByBatch(3).Mean(); got != 50*ms { // bucket 4
		t.Errorf("ByBatch(3) = %v, want the batch-4 samples", got)
	}
	if got := d.ByBatch(8).Mean(); got != 50*ms { // none larger: nearest smaller
		t.Errorf("ByBatch(8) = %v, want the batch-4 samples", got)
	}
}
