package colocate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

func gavelPath(t *testing.T) string {
	return filepath.Join(repo.SharedTraces(t, "gavel-throughputs"), "simulation_throughputs.json")
}

// Bad configuration is an error naming what is wrong.
func TestLoadPairsErrors(t *testing.T) {
	path := gavelPath(t)
	for _, c := range []struct {
		path, gpu string
		rule      Rule
		want      string
	}{
		{filepath.Join(t.TempDir(), "none.json"), "v100", Predicted, "none.json"},
		{path, "a100", Predicted, `"a100"`},
		{path, "v100", Rule("greedy"), `"greedy"`},
	} {
		if _, err := LoadPairs(c.path, c.gpu, c.rule, FitOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s %s: error %v, want it to name %s", c.path, c.gpu, c.rule, err, c.want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"v100": {"('LM', 1)": {}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPairs(bad, "v100", Oracle, FitOptions{}); err == nil || !strings.Contains(err.Error(), "null") {
		t.Errorf("a type without its throughput alone: %v", err)
	}
}

// The placer with the loaded predictor, on P100: a ResNet-50 (b64) runs on
// GPU 0, an LM (b20) on GPU 1, half a GPU each. A Recommendation (b512)
// job joins only where both slowdowns stay ≤ 1.5: the oracle picks LM's
// GPU, naive the first, exclusive none. Every decision is checked
// against the loaded slowdowns, so the bound holds by the placer's rule,
// not by this test's arithmetic.
func TestLoadedPairsDriveTheBoundedPlacer(t *testing.T) {
	path := gavelPath(t)
	for _, rule := range []Rule{Oracle, Predicted, Exclusive, Naive} {
		pairs, err := LoadPairs(path, "p100", rule, FitOptions{Partners: true})
		if err != nil {
			t.Fatal(err)
		}
		cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 1, GPUsPerNode: 2, GPUMemMiB: 16000})
		var running []*policy.Job
		for g, j := range []*policy.Job{gavelJob("r50", "ResNet-50", 64), gavelJob("lm", "LM", 20)} {
			j.State, j.MemMiB = policy.Running, 1000
			pt.Run(&cl, j, policy.Placement{Slots: []policy.Slot{{Node: "r0n0", GPU: g, Fraction: 0.5, MemMiB: 1000}}})
			running = append(running, j)
		}
		pl := place.NewInterference(place.InterferenceConfig{Pairs: pairs, SlowdownBound: 1.5})
		c := policy.NewCapacity(&cl)
		c.TrackResidents(running)
		j := gavelJob("rec", "Recommendation", 512)
		j.MemMiB = 1000
		d, err := policy.DemandOf(j)
		if err != nil {
			t.Fatal(err)
		}
		p, why := pl.Place(j, d, c)
		t.Logf("%s: placed %+v, waiting %q", rule, p.Slots, why)
		var joined []int
		if why == "" {
			joined = []int{p.Slots[0].GPU}
		}
		for g, r := range running {
			sj, okj := pairs.Slowdown(j, r)
			sr, okr := pairs.Slowdown(r, j)
			allowed := okj && okr && sj <= 1.5 && sr <= 1.5
			if len(joined) == 1 && joined[0] == g && !allowed {
				t.Errorf("%s: joined GPU %d at slowdowns %.2f/%.2f (ok %v %v), bound 1.5", rule, g, sj, sr, okj, okr)
			}
			if len(joined) == 0 && allowed {
				t.Errorf("%s: waited (%q) though GPU %d keeps %.2f/%.2f ≤ 1.5", rule, why, g, sj, sr)
			}
		}
		if rule == Exclusive && len(joined) != 0 {
			t.Errorf("exclusive shared GPU %v", joined)
		}
		if rule == Oracle && (len(joined) != 1 || joined[0] != 1) {
			t.Errorf("oracle: want LM's GPU 1 (P100 measures Recommendation and LM under 1.5 together, not beside ResNet-50), got %v %q", joined, why)
		}
		if rule == Naive && len(joined) != 1 {
			t.Errorf("naive did not share: %q", why)
		}
	}
}
