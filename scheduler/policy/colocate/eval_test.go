package colocate

import (
	"path/filepath"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

func realSamples(t *testing.T, gpu string) []Sample {
	t.Helper()
	g, err := profile.LoadGavel(filepath.Join(repo.SharedTraces(t, "gavel-throughputs"), "simulation_throughputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	graphs, err := profile.GavelGraphs()
	if err != nil {
		t.Fatal(err)
	}
	s, skipped := GavelSamples(g, gpu, graphs)
	if skipped != 0 {
		t.Fatalf("%d pairs skipped for missing graph features", skipped)
	}
	return s
}

// Every measured single-GPU pair is predicted once per held-out model it
// involves; on P100 and K80 the graph-feature regression beats the β model
// held out (on V100 it does not: README, `caravan colocate eval`).
func TestLeaveOneModelOutOnGavel(t *testing.T) {
	want := map[string]int{"v100": 636, "p100": 656, "k80": 589}
	for gpu, n := range want {
		s := realSamples(t, gpu)
		if len(s) != n {
			t.Fatalf("%s: %d samples, want %d", gpu, len(s), n)
		}
		ev := EvaluateLOMO(s, 1.25, DefaultBeta())
		if len(ev.Models) != 7 || ev.Horus.Pairs < n {
			t.Fatalf("%s: %d models held out, %d predictions", gpu, len(ev.Models), ev.Horus.Pairs)
		}
		if gpu != "v100" && ev.Horus.MedianRel >= ev.Beta.MedianRel {
			t.Fatalf("%s: held-out median error %.3f, β model %.3f", gpu, ev.Horus.MedianRel, ev.Beta.MedianRel)
		}
	}
}
