package policy_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Giants placed in pre-faulted storage (Idle between decisions) start as
// without it, and every decision's placements, the caller's, stay as
// returned while later giants take the spares: two giants of 16,400
// half-GPU workers start, finish, and two more start in their place,
// with 2D-LAS and fifo.
func TestReservedGiantsSameDecisions(t *testing.T) {
	cl := gpuCluster(2100, 50)
	giant := func(id string, submit float64) *policy.Job {
		return &policy.Job{ID: id, State: policy.Queued, Workers: 16400, Fraction: 0.5, Submit: submit}
	}
	for _, name := range []string{"fifo", "tiresias-las"} {
		idle, plain := newPolicy(t, name), newPolicy(t, name)
		s := &policy.Snapshot{Now: 100, Cluster: cl, Jobs: []*policy.Job{giant("g1", 1), giant("g2", 2), giant("g3", 3), giant("g4", 4)}}
		var held []policy.Start // every decision's starts, as the caller keeps them
		var kept [][]policy.Slot
		for round := range 3 {
			want := copyOf(plain.Decide(s))
			got := idle.Decide(s)
			sameDecision(t, name, round, want, got)
			if len(got.Starts) != 2 {
				t.Fatalf("%s round %d: %d starts, want two giants", name, round, len(got.Starts))
			}
			held = append(held, got.Starts...)
			for _, st := range got.Starts {
				kept = append(kept, slices.Clone(st.Placement.Slots))
			}
			policy.IdleBetween(idle)
			s = finishStarted(s, got.Starts, round)
		}
		for i, st := range held {
			if !slices.Equal(st.Placement.Slots, kept[i]) {
				t.Fatalf("%s: start %s changed after later giants took the spares", name, st.JobID)
			}
		}
		if n := policy.ReserveTaken(idle.(*policy.Framework)); n < 4 {
			t.Fatalf("%s: %d giants took a spare, want the last two decisions' four", name, n)
		}
	}
}

// finishStarted is s a minute later with the jobs of starts finished and
// two new giants queued.
func finishStarted(s *policy.Snapshot, starts []policy.Start, round int) *policy.Snapshot {
	done := map[string]bool{}
	for _, st := range starts {
		done[st.JobID] = true
	}
	next := &policy.Snapshot{Now: s.Now + 60, Cluster: s.Cluster}
	for _, j := range s.Jobs {
		if !done[j.ID] {
			next.Jobs = append(next.Jobs, j)
		}
	}
	for k := range 2 {
		id := fmt.Sprintf("n%d-%d", round, k)
		next.Jobs = append(next.Jobs, &policy.Job{ID: id, State: policy.Queued, Workers: 16400, Fraction: 0.5, Submit: next.Now + float64(k)})
	}
	return next
}
