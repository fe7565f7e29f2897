package estimate

import (
	"math"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

func TestRightSizeLearnsRatioWithFloors(t *testing.T) {
	e := New(Config{})
	for i := 0; i < 10; i++ {
		e.Observe(Usage{Model: "resnet", User: "ann", ReqFraction: 1, ReqMemMiB: 16000,
			UsedFraction: 0.6, UsedMemMiB: 8000})
	}
	j := &policy.Job{Model: "resnet", User: "bob", Fraction: 1, MemMiB: 16000}
	f, m, ok := e.RightSize(j) // bob has no history: (model, size) group answers
	if !ok || math.Abs(f-0.66) > 1e-9 || m != 8800 {
		t.Fatalf("right-size %g, %d, %v; want 0.66 (0.6 × 1.1 headroom), 8800 MiB", f, m, ok)
	}
	j.HardMinFraction, j.HardMinMemMiB = 0.9, 12000
	if f, m, _ := e.RightSize(j); f != 0.9 || m != 12000 {
		t.Fatalf("floors ignored: %g, %d", f, m)
	}
	unknown := &policy.Job{Model: "bert", Fraction: 0.5, MemMiB: 4000}
	if f, m, ok := e.RightSize(unknown); ok || f != 0.5 || m != 4000 {
		t.Fatalf("no history must keep the request: %g %d %v", f, m, ok)
	}
}

func TestErrorsAreOutOfSample(t *testing.T) {
	e := New(Config{MinSamples: 1})
	e.Observe(Usage{Model: "m", ReqFraction: 1, ReqMemMiB: 1000, UsedFraction: 0.5, UsedMemMiB: 500})
	if e.Errors().N != 0 {
		t.Fatal("the first job cannot be predicted")
	}
	e.Observe(Usage{Model: "m", ReqFraction: 1, ReqMemMiB: 1000, UsedFraction: 0.4, UsedMemMiB: 400})
	got := e.Errors() // predicted 0.5 / 500 before learning 0.4 / 400
	if got.N != 1 || math.Abs(got.FractionMAE-0.1) > 1e-9 || math.Abs(got.MemMAE-100) > 1e-6 ||
		math.Abs(got.FractionMAPE-25) > 1e-6 || math.Abs(got.MemMAPE-25) > 1e-6 {
		t.Fatalf("errors %+v", got)
	}
	e.Observe(Usage{Model: "m", ReqFraction: -1}) // invalid: ignored
	if e.Errors().N != 1 {
		t.Fatal("invalid usage was learned")
	}
}
