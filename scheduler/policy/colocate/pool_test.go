package colocate

import (
	"math"
	"testing"
)

// pooledSynthetic is synthetic() on two GPU types, "y" slowing every pair
// down half again as much (in log) as "x".
func pooledSynthetic() []Sample {
	var out []Sample
	for _, gpu := range []string{"x", "y"} {
		for _, s := range synthetic() {
			s.Job.GPU, s.Partner.GPU = gpu, gpu
			if gpu == "y" {
				s.Slowdown = math.Pow(s.Slowdown, 1.5)
			}
			out = append(out, s)
		}
	}
	return out
}

// scramble changes model "a"'s measurements on the GPU types listed.
func scramble(s []Sample, gpus ...string) []Sample {
	out := append([]Sample(nil), s...)
	for i := range out {
		for _, g := range gpus {
			if involves(out[i], "a") && out[i].Job.GPU == g {
				out[i].Slowdown = 9 + float64(i%7)
			}
		}
	}
	return out
}

func predictionsOfA(t *testing.T, h *HeldOut, s []Sample, gpu string) []float64 {
	t.Helper()
	var out []float64
	for _, x := range s {
		if involves(x, "a") && x.Job.GPU == gpu {
			out = append(out, h.Slowdown(x.Job, x.Partner))
		}
	}
	return out
}

// The pooled held-out fit never sees a held-out model on any GPU type; the
// seen-elsewhere fit never sees it on the GPU it predicts, but does on the
// others (so scrambling those moves its predictions: it is not held out).
func TestPooledHeldOutSeesNoPairOfItsModels(t *testing.T) {
	s := pooledSynthetic()
	base, err := NewHeldOutPooled(s, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := NewHeldOutPooled(scramble(s, "x", "y"), FitOptions{})
	want := predictionsOfA(t, base, s, "x")
	if got := predictionsOfA(t, all, s, "x"); !equalFloats(got, want) {
		t.Fatal("pooled held-out predictions moved when the held-out model's pairs changed")
	}
	seen, _ := NewSeenElsewhere(s, "x", FitOptions{})
	seenX, _ := NewSeenElsewhere(scramble(s, "x"), "x", FitOptions{})
	seenY, _ := NewSeenElsewhere(scramble(s, "y"), "x", FitOptions{})
	if !equalFloats(predictionsOfA(t, seenX, s, "x"), predictionsOfA(t, seen, s, "x")) {
		t.Fatal("seen-elsewhere predictions on x moved with the model's pairs on x")
	}
	if equalFloats(predictionsOfA(t, seenY, s, "x"), predictionsOfA(t, seen, s, "x")) {
		t.Fatal("seen-elsewhere predictions on x ignore the model's pairs on y")
	}
	// The GPU type is a feature: pairs are predicted slower on y (where
	// the fit's range allows it: predictions clamp to the training range).
	higher, lower := 0, 0
	for _, x := range s[:len(s)/2] {
		onY := x
		onY.Job.GPU, onY.Partner.GPU = "y", "y"
		switch py, px := base.Slowdown(onY.Job, onY.Partner), base.Slowdown(x.Job, x.Partner); {
		case py > px:
			higher++
		case py < px:
			lower++
		}
	}
	if higher <= 10*lower {
		t.Fatalf("pooled fit predicts %d pairs slower on y, %d faster", higher, lower)
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
