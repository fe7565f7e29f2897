package profile

import (
	"math"
	"testing"
)

func TestRingAllReduce(t *testing.T) {
	// 2 nodes, 100 MB at 8 Gbit/s: 2·1/2·0.8 Gbit / 8 Gbit/s = 0.1 s.
	if got := RingAllReduceSeconds(2, 100e6, 8); math.Abs(got-0.1) > 1e-12 {
		t.Fatalf("got %g", got)
	}
	if RingAllReduceSeconds(1, 100e6, 8) != 0 || RingAllReduceSeconds(4, 1, 0) != 0 {
		t.Fatal("one node or unknown bandwidth must cost nothing")
	}
}

func TestStepTimeAtIsCalibratedAndMonotone(t *testing.T) {
	m := &Model{Name: "x",
		step:    map[string]float64{"1": 1.0, "2": 1.05, "11": 1.4},
		sync:    map[string]float64{"1": 0.01, "2": 0.06, "11": 0.41},
		netSync: map[int]float64{2: 0.4},
	}
	// G = 0.4 s · 50 Gbit/s / 8 / (2·1/2) = 2.5 GB
	if g := m.GradientBytes(); math.Abs(g-2.5e9) > 1 {
		t.Fatalf("gradient bytes %g, want 2.5e9", g)
	}
	shape := []int{1, 1}
	if got := m.StepTimeAt(shape, RefLinkGbps); math.Abs(got-1.4) > 1e-9 {
		t.Fatalf("at the reference bandwidth: %g, want the measured 1.4", got)
	}
	slow, fast := m.StepTimeAt(shape, 10), m.StepTimeAt(shape, 100)
	if !(slow > 1.4 && fast < 1.4 && fast >= 0.99) {
		t.Fatalf("10 Gbit/s %g, 100 Gbit/s %g: want slower and faster than 1.4, never under compute", slow, fast)
	}
	// 10 Gbit/s: 1.4 + 2.5e9·8/10e9 − 0.4 = 3.0 s.
	if math.Abs(slow-3.0) > 1e-9 {
		t.Fatalf("10 Gbit/s: %g, want 3.0", slow)
	}
	if m.StepTimeAt([]int{2}, 1) != m.StepTime([]int{2}) {
		t.Fatal("one node must not depend on links")
	}
}
