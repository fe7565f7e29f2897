package sim

import (
	"math"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// Average JCTs the Tiresias authors' simulator (SymbioticLab/Tiresias
// simulator/, converted to Python 3 by lib2to3 and otherwise unchanged,
// --scheme=yarn) printed for the traces in testdata/fidelity; see the
// README's fidelity section for the commands.
var tiresiasReference = []struct {
	trace            string
	nodes, perNode   int
	policy           string
	avgJCT, tolerant float64
}{
	{"philly300.csv", 4, 8, "fifo", 130377.78, 0.001}, // YARN-CS
	{"philly300.csv", 8, 4, "fifo", 110956.70, 0.001},
	{"wide200.csv", 4, 8, "fifo", 23370.70, 0.001},
	{"wide200.csv", 8, 4, "fifo", 22010.10, 0.001},
	{"philly300.csv", 4, 8, "tiresias-las-mlfq", 56784.84, 0.02}, // dlas-gpu
	{"wide200.csv", 4, 8, "tiresias-las-mlfq", 16575.12, 0.02},
}

// Caravan's fifo (fifo+yarn) reproduces the reference's YARN-CS baseline
// within 0.1 %, and tiresias-las-mlfq its dlas-gpu within 2 %, placement-blind.
func TestMatchesTiresiasReference(t *testing.T) {
	for _, c := range tiresiasReference {
		sc, _, err := Spec{Trace: "tiresias:testdata/fidelity/" + c.trace, GPUs: c.nodes * c.perNode, GPUsPerNode: c.perNode}.Load()
		if err != nil {
			t.Fatal(err)
		}
		rs, err := Compare(sc, []string{c.policy}, func(n string) (policy.Policy, error) { return registry.New(n, registry.Config{}) }, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := rs[0].Metrics.AvgJCT
		if math.Abs(got/c.avgJCT-1) > c.tolerant {
			t.Errorf("%s on %d×%d, %s: avg JCT %.2f, reference %.2f (±%g %%)", c.trace, c.nodes, c.perNode, c.policy, got, c.avgJCT, 100*c.tolerant)
		}
	}
}
