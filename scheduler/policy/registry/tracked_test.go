package registry

import (
	"reflect"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// trackedSpec is a small cluster under heavy churn: a fifth of the
// running jobs finish per round and a dozen jobs arrive.
func trackedSpec(seed uint64) (pt.RandomSpec, pt.ChurnSpec) {
	sp := goldenSpec(seed)
	if seed%7 == 0 {
		sp.Running, sp.Queued = 150, 400
	}
	return sp, pt.ChurnSpec{Interval: 60 + float64(seed%3)*400, Finish: 0.2, Arrive: 12, Jobs: sp}
}

// Snapshot.JobGen: every policy decides a churning tracked snapshot
// exactly as the same snapshot untracked (Starts, Preempts, and the
// Waiting and Ranking a reader sees), reasons asked for or skipped,
// Tiresias' promotion on or off, running jobs' service added and
// stamped every round or accruing (policy.Accrual) unstamped, their
// progress stamped in JobGen or apart (Snapshot.ProgressGen).
func TestJobGenSameDecisions(t *testing.T) {
	bare := map[string]bool{}
	for _, o := range Orderings() {
		bare[o] = true
	}
	for _, promote := range []float64{0, 2} {
		for _, name := range Names() {
			seeds := uint64(7) // every bare ordering fully, each placement on fewer
			if !bare[name] || testing.Short() {
				seeds = 3
			}
			for seed := uint64(1); seed <= seeds; seed++ {
				for _, v := range trackedVariants {
					sameTracked(t, name, seed+uint64(promote), promote, seed%2 == 0, v)
				}
			}
		}
	}
}

// trackedVariant is how a churn stamps running jobs: service added and
// stamped, or accruing; progress in JobGen, or apart in ProgressGen.
type trackedVariant struct{ accrue, split bool }

var trackedVariants = []trackedVariant{{false, false}, {true, false}, {true, true}}

func newWith(t *testing.T, name string, promote float64) policy.Policy {
	t.Helper()
	cfg := Config{GittinsPrior: []float64{100, 900, 3000, 20000, 80000}}
	cfg.Queues.PromoteKnob = promote
	p, err := New(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sameTracked runs one churning sequence through a tracked and an
// untracked instance of name and requires identical decisions.
func sameTracked(t *testing.T, name string, seed uint64, promote float64, skip bool, v trackedVariant) {
	t.Helper()
	sp, cs := trackedSpec(seed)
	cs.Accrue, cs.SplitProgress = v.accrue, v.split
	s := pt.Random(seed, sp)
	s.SkipReasons = skip
	c := pt.NewChurn(seed, s, cs)
	tracked, plain := newWith(t, name, promote), newWith(t, name, promote)
	// prepared is tracked but learns each round's finished jobs as they
	// finish and prepares before the next decision (policy.Preparer), as
	// the simulator and the live scheduler feed it
	prepared := newWith(t, name, promote)
	for round := 0; round < 12; round++ {
		gen := s.JobGen
		s.JobGen = nil
		want := plain.Decide(s)
		s.JobGen = gen
		got := tracked.Decide(s)
		prep := prepared.Decide(s)
		for _, d := range []struct {
			how string
			got policy.Decision
		}{{"tracked", got}, {"prepared", prep}} {
			if !reflect.DeepEqual(want.Starts, d.got.Starts) || !reflect.DeepEqual(want.Preempts, d.got.Preempts) {
				t.Fatalf("%s seed=%d promote=%g skip=%v variant=%+v round %d: %s started %v preempted %v, untracked %v %v",
					name, seed, promote, skip, v, round, d.how, d.got.Starts, d.got.Preempts, want.Starts, want.Preempts)
			}
			if !sameList(want.Waiting, d.got.Waiting) || !sameList(want.Ranking, d.got.Ranking) {
				t.Fatalf("%s seed=%d promote=%g skip=%v variant=%+v round %d: %s Waiting/Ranking differ:\n%v\n%v\nvs\n%v\n%v",
					name, seed, promote, skip, v, round, d.how, d.got.Waiting, d.got.Ranking, want.Waiting, want.Ranking)
			}
		}
		for i := range got.Ranking { // a careless reader: the next round must not care
			got.Ranking[i] = policy.Rank{JobID: "scribbled"}
		}
		for i := range got.Waiting {
			got.Waiting[i] = policy.Wait{JobID: "scribbled"}
		}
		c.Step(want)
		if c.Changed == 0 && round > 0 {
			t.Fatalf("%s seed=%d: churn changed nothing", name, seed)
		}
		policy.LearnBetween(prepared, c.Finished())
	}
}

// sameList is slice equality where nil and empty are alike.
func sameList[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A caller that changes a job without a new stamp breaks JobGen's
// contract: the policy decides on the job as it was last read. This is
// the documented consequence (Snapshot.JobGen), shown here so a change
// that made the bug silently harmless or worse is noticed.
func TestJobGenCallerBug(t *testing.T) {
	s := &policy.Snapshot{Now: 100, Cluster: pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 1, GPUsPerNode: 4})}
	s.Jobs = []*policy.Job{{ID: "a", Submit: 1, State: policy.Queued, Workers: 8, Fraction: 1}}
	s.JobGen = []uint64{1}
	p := newWith(t, "fifo", 0)
	if d := p.Decide(s); len(d.Starts) != 0 {
		t.Fatalf("an 8-GPU gang started on 4 GPUs: %v", d.Starts)
	}
	s.Jobs[0].Workers = 2 // changed, but not stamped: the caller's bug
	d := p.Decide(s)
	if len(d.Starts) != 0 || d.Waiting.Reason("a") == "" {
		t.Fatalf("the unstamped change was seen after all (%v %v): update TestJobGenCallerBug and Snapshot.JobGen's doc", d.Starts, d.Waiting)
	}
	s.JobGen[0] = 2 // stamped: now it is read again
	if d := p.Decide(s); len(d.Starts) != 1 {
		t.Fatalf("the stamped change was not seen: %v %v", d.Starts, d.Waiting)
	}
}

// The orderings that keep keys by position say where each ranked job is
// listed, so a tracked Framework reads no unchanged job.
func TestJobGenRankIndexers(t *testing.T) {
	for _, name := range []string{"fifo", "srtf-oracle", "tiresias-las", "tiresias-gittins", "fair"} {
		f, ok := newWith(t, name, 0).(*policy.Framework)
		if !ok {
			t.Fatalf("%s is not a Framework", name)
		}
		if _, ok := f.Order.(policy.RankIndexer); !ok {
			t.Errorf("%s: its ordering is no RankIndexer", name)
		}
	}
}
