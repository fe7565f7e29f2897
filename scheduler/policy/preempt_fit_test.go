package policy_test

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// A lazy trial that counts its gang's fit (preempt_fit.go) places the
// gang at the first prefix of victims with which it fits, without the
// batch tests and the bisection, and decides as a trial that tests and
// bisects: same Starts, Preempts, Waiting and Ranking, and the same
// capacity left (every GPU, node summary and total; not the Epoch, which
// counts releases), round after round of churned snapshots, with shares
// in quarters and with shares whose sums round (the lazy mode gives up
// there, and the count with it). Trials must be placed at their counted
// prefix, with fewer placer calls.
func TestFitJumpsSameDecisions(t *testing.T) {
	defer policy.FitJumpsOff(false)
	for _, name := range []string{"tiresias-gittins", "tiresias-las", "srtf-oracle", "lucid"} {
		fitted, with, without := 0, 0, 0
		for seed := uint64(1); seed <= 8; seed++ {
			f, pw, po := fitJumpsAgree(t, name, seed)
			fitted, with, without = fitted+f, with+pw, without+po
		}
		t.Logf("%s: %d trials placed at their counted prefix; placer calls %d against %d", name, fitted, with, without)
		if fitted == 0 {
			t.Errorf("%s: no trial placed at its counted prefix", name)
		}
		if with >= without {
			t.Errorf("%s: placer calls %d with counted prefixes, %d without: none saved", name, with, without)
		}
	}
}

// fitJumpsAgree decides 12 churned rounds of one seed with and without
// counted prefixes, failing on any difference; it returns the trials
// placed at their prefix and the placer calls of each instance.
func fitJumpsAgree(t *testing.T, name string, seed uint64) (fitted, placedWith, placedWithout int) {
	c, with, without := churnedPair(t, name, seed, false)
	fw, fo := with.(*policy.Framework), without.(*policy.Framework)
	for round := 0; round < 12; round++ {
		want := decidePair(t, name, seed, round, c.S, with, without, policy.FitJumpsOff, policy.FreeGPUs)
		sw, so := fw.LastTrialStats(), fo.LastTrialStats()
		if so.Fitted != 0 {
			t.Fatalf("%s seed %d round %d: %d trials fitted with counted prefixes off", name, seed, round, so.Fitted)
		}
		fitted, placedWith, placedWithout = fitted+sw.Fitted, placedWith+sw.PlacerCalls, placedWithout+so.PlacerCalls
		c.Step(want)
	}
	return fitted, placedWith, placedWithout
}

// A trial placed at its counted prefix is recorded by the trial memo
// (preempt_memo.go) with the victims its batch test would have listed,
// so an unchanged snapshot decided again replays it, as it replays a
// bisected trial: the same decisions and capacity as an instance
// without counted prefixes, and trials replayed.
func TestFitJumpsReplayed(t *testing.T) {
	defer policy.FitJumpsOff(false)
	for _, name := range []string{"srtf-oracle"} { // the ordering whose trials the memo replays here
		s := pt.Random(3, pt.RandomSpec{
			Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 8, GPUsPerNode: 8},
			Running: 400, Queued: 300, Busy: 0.95, FracShare: 0.7,
		})
		with, without := newPolicy(t, name), newPolicy(t, name)
		fw := with.(*policy.Framework)
		hits, fitted := 0, 0
		for round := 0; round < 6; round++ {
			decidePair(t, name, 3, round, s, with, without, policy.FitJumpsOff, policy.FreeGPUs)
			_, h := policy.TrialMemoStats(fw)
			hits, fitted = hits+h, fitted+fw.LastTrialStats().Fitted
		}
		t.Logf("%s: %d trials placed at their counted prefix, %d replayed", name, fitted, hits)
		if fitted == 0 || hits == 0 {
			t.Errorf("%s: %d trials placed at their counted prefix, %d replayed: both must happen", name, fitted, hits)
		}
	}
}
