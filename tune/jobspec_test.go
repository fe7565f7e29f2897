package tune

import (
	"os"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/live"
)

// TestShippedSpec: the spec in jobspecs/ parses and lays out 9 → 3 → 1.
func TestShippedSpec(t *testing.T) {
	src, err := os.ReadFile("../jobspecs/tune-digits.tune.hcl")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSpec("tune-digits.tune.hcl", src)
	if err != nil {
		t.Fatal(err)
	}
	tu, err := NewTuner(*s)
	if err != nil {
		t.Fatal(err)
	}
	if s.BatchParam != "batch" {
		t.Fatalf("batch_param %q: the fluid policy would not know the trials' batch", s.BatchParam)
	}
	if br := tu.Brackets[0]; br.N != 9 || br.Rungs != 3 || tu.RungBudget(0, 0) != 40 || tu.RungBudget(0, 1) != 120 {
		t.Fatalf("bracket %+v", tu.Brackets[0])
	}
}

// TestBatchSizeKeyIsTheSchedulers: the key the tuner sends is the one the
// live scheduler reads into Features.BatchSize.
func TestBatchSizeKeyIsTheSchedulers(t *testing.T) {
	if MetaBatchSize != live.MetaBatchSize {
		t.Fatalf("tune sends %q, the scheduler reads %q", MetaBatchSize, live.MetaBatchSize)
	}
}
