package policy_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// Snapshot.MaxStarts: a decision with a start budget is the unbounded
// decision's prefix. One instance decides each churned snapshot without
// a budget, another with one (a single start, half the unbounded starts,
// or one more than them, by round), and the budgeted decision must make
// the unbounded one's first starts, the preemptions made for them and
// no others, and give every queued job a Wait: its unbounded reason, or
// the budget's for a job the walk stopped before. Run over the walk job
// by job and the skipping walk, tracked and untracked, with reasons and
// without, head-of-line blocking, a batch placer, and optimus (which
// trims its decision instead).
func TestStartBudgetIsPrefix(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer policy.SetSplitMin(policy.SetSplitMin(7))
	skipped := 0 // variants whose skipping walk passed ranks over
	names := []string{"fifo", "fifo+consolidated", "srtf-oracle", "tiresias-las", "tiresias-gittins", "fair", "lucid",
		"optimus", "srtf-oracle+network-aware-batch", "tiresias-las+frag-aware"}
	for _, name := range names {
		for _, v := range []struct{ tracked, skipWalk, skipReasons, backfill bool }{
			{true, true, false, true}, {false, true, false, true}, {true, false, false, true},
			{false, false, true, true}, {true, false, false, false},
		} {
			label := fmt.Sprintf("%s %+v", name, v)
			t.Run(label, func(t *testing.T) {
				if budgetPrefix(t, name, v.tracked, v.skipWalk, v.skipReasons, v.backfill) > 0 {
					skipped++
				}
			})
		}
	}
	if skipped < 5 {
		t.Fatalf("the skipping walk passed ranks over in %d variants: the budget's cut in it is barely compared", skipped)
	}
}

// budgetPrefix runs one variant and returns how many ranges of ranks
// the budgeted instance's skipping walks passed over.
func budgetPrefix(t *testing.T, name string, tracked, skipWalk, skipReasons, backfill bool) (passed int) {
	defer policy.SetSkipWalk(policy.SetSkipWalk(0, !skipWalk))
	mk := func() policy.Policy {
		p, err := registry.New(name, registry.Config{FIFOBackfill: backfill})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain, budgeted := mk(), mk()
	sp := pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 3, NodesPerRack: 8, GPUsPerNode: 8},
		Running: 300, Queued: 600, Busy: 0.9, FracShare: 0.5, ElasticShare: 0.3} // elastic: optimus resizes
	s := withOwnReasons(pt.Random(13, sp))
	for k, frac := range []float64{1.5, 2, 1.25} { // own reasons ranked late too
		j := pt.Job(fmt.Sprintf("own-late-%d", k), 1+k, s.Now)
		j.Fraction = frac
		s.Jobs = append(s.Jobs, j)
	}
	s.SkipReasons = skipReasons
	c := pt.NewChurn(13, s, pt.ChurnSpec{Interval: 300, Finish: 0.15, Arrive: 15, Jobs: sp, Accrue: true})
	cut, preempts := 0, 0
	for round := 0; round < 12; round++ {
		gen := s.JobGen
		if !tracked {
			s.JobGen = nil
		}
		want := copyOf(plain.Decide(s))
		budget := []int{1, len(want.Starts) / 2, len(want.Starts) + 1}[round%3]
		s.MaxStarts = max(budget, 1)
		got := budgeted.Decide(s)
		if f, ok := budgeted.(*policy.Framework); ok {
			passed += policy.SkipWalkPassed(f)
		}
		s.MaxStarts, s.JobGen = 0, gen
		if len(want.Starts) > s.MaxStarts {
			cut++
		}
		preempts += len(got.Preempts)
		samePrefix(t, fmt.Sprintf("round %d budget %d", round, max(budget, 1)), s, max(budget, 1), want, got)
		for _, j := range s.Jobs {
			if j.State == policy.Finished {
				for _, p := range []policy.Policy{plain, budgeted} {
					if o, ok := p.(policy.FinishObserver); ok {
						o.ObserveFinished(j)
					}
				}
			}
		}
		c.Step(want)
	}
	if cut < 4 {
		t.Fatalf("the budget cut %d of 12 decisions: too few compared", cut)
	}
	t.Logf("%d decisions cut, %d preemptions in the budgeted decisions, %d ranges passed over", cut, preempts, passed)
	return passed
}

// samePrefix holds got, decided under the start budget k, to want,
// decided without one.
func samePrefix(t *testing.T, at string, s *policy.Snapshot, k int, want, got policy.Decision) {
	t.Helper()
	n := min(k, len(want.Starts))
	if len(got.Starts) != n {
		t.Fatalf("%s: %d starts, want the first %d of %d", at, len(got.Starts), n, len(want.Starts))
	}
	for i := range got.Starts {
		if got.Starts[i].JobID != want.Starts[i].JobID || !slices.Equal(got.Starts[i].Placement.Slots, want.Starts[i].Placement.Slots) {
			t.Fatalf("%s: start %d is %v, want %v", at, i, got.Starts[i], want.Starts[i])
		}
	}
	if len(got.Preempts) > len(want.Preempts) || !slices.Equal(got.Preempts, want.Preempts[:len(got.Preempts)]) {
		t.Fatalf("%s: preempted %v, not a prefix of %v", at, got.Preempts, want.Preempts)
	}
	if !slices.Equal(got.Ranking, want.Ranking) {
		t.Fatalf("%s: the ranking differs", at)
	}
	if k > len(want.Starts) {
		if !slices.Equal(got.Preempts, want.Preempts) || !slices.Equal(got.Waiting, want.Waiting) {
			t.Fatalf("%s: a budget the decision did not reach changed it", at)
		}
		return
	}
	// every preemption made for a start kept is kept
	started := map[string]bool{}
	for _, st := range got.Starts {
		started[st.JobID] = true
	}
	kept := map[string]bool{}
	for _, id := range got.Preempts {
		kept[id] = true
	}
	for _, w := range want.Waiting {
		if by, ok := strings.CutPrefix(w.Reason, "preempted for higher-priority job "); ok && started[by] && !kept[w.JobID] {
			t.Fatalf("%s: %s was preempted for %s, which started, but not under the budget", at, w.JobID, by)
		}
	}
	if s.SkipReasons {
		return
	}
	wantWhy := map[string]string{}
	for _, w := range want.Waiting {
		wantWhy[w.JobID] = w.Reason
	}
	queued := map[string]bool{}
	for _, j := range s.Jobs {
		queued[j.ID] = j.State == policy.Queued
	}
	gotWhy := map[string]string{}
	budget := policy.BudgetReason(k)
	budgeted := 0
	for _, w := range got.Waiting {
		if _, dup := gotWhy[w.JobID]; dup {
			t.Fatalf("%s: %s waits twice", at, w.JobID)
		}
		gotWhy[w.JobID] = w.Reason
		if strings.HasSuffix(w.Reason, budget) {
			if strings.HasPrefix(w.JobID, "own") { // an invalid request says so, budget or not
				t.Fatalf("%s: %s waits for the budget, unbounded for %q", at, w.JobID, wantWhy[w.JobID])
			}
			if !queued[w.JobID] {
				t.Fatalf("%s: running job %s waits for the budget", at, w.JobID)
			}
			budgeted++
			continue
		}
		if w.Reason != wantWhy[w.JobID] {
			t.Fatalf("%s: %s waits for %q, unbounded %q", at, w.JobID, w.Reason, wantWhy[w.JobID])
		}
	}
	for _, st := range want.Starts[n:] { // past the cut: each queued one waits for the budget
		if queued[st.JobID] && !strings.HasSuffix(gotWhy[st.JobID], budget) {
			t.Fatalf("%s: %s started past the budget unbounded, and waits for %q", at, st.JobID, gotWhy[st.JobID])
		}
	}
	for _, j := range s.Jobs {
		if _, ok := gotWhy[j.ID]; j.State == policy.Queued && !started[j.ID] && !ok {
			t.Fatalf("%s: queued job %s neither starts nor waits", at, j.ID)
		}
	}
	if budgeted == 0 {
		t.Fatalf("%s: the budget cut the decision, and no job waits for it", at)
	}
}

// TrimStarts drops the starts past the budget, and only the queued jobs
// among them wait: a running job whose resize was dropped runs on.
func TestTrimStarts(t *testing.T) {
	s := &policy.Snapshot{MaxStarts: 1}
	d := policy.Decision{Starts: []policy.Start{{JobID: "shrink"}, {JobID: "a"}, {JobID: "b"}, {JobID: "grow"}}}
	queued := func(i int) bool { return i == 1 || i == 2 }
	policy.TrimStarts(&d, s, queued)
	why := policy.BudgetReason(1)
	if want := []policy.Wait{{JobID: "a", Reason: why}, {JobID: "b", Reason: why}}; len(d.Starts) != 1 ||
		d.Starts[0].JobID != "shrink" || !slices.Equal(d.Waiting, want) {
		t.Fatalf("trimmed to %v, waiting %v; want [shrink] and %v", d.Starts, d.Waiting, want)
	}
	s.SkipReasons, d.Waiting = true, nil
	d.Starts = append(d.Starts, policy.Start{JobID: "a"})
	if policy.TrimStarts(&d, s, queued); len(d.Starts) != 1 || d.Waiting != nil {
		t.Fatalf("without reasons: %v, %v", d.Starts, d.Waiting)
	}
	s.MaxStarts = 0 // no budget: nothing trimmed
	d.Starts = append(d.Starts, policy.Start{JobID: "a"})
	if policy.TrimStarts(&d, s, queued); len(d.Starts) != 2 {
		t.Fatalf("no budget trimmed to %v", d.Starts)
	}
}
