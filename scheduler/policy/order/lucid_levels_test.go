package order

import (
	"fmt"
	"math"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// A tracked Lucid's feature ids give, after every call, the levels the
// model reads from the job itself: levels learnt between calls, one or
// many at once; a user or a user × shape learnt before or after any job
// keyed had it; features that change under a new stamp; and a shape
// that can never be learnt (a NaN fraction).
func TestLucidIDsFollowTheModel(t *testing.T) {
	l := newLucid(t, LucidConfig{Estimate: LucidEstimateConfig{HourOfDay: true}})
	job := func(id, user, model string, workers int) *policy.Job {
		return &policy.Job{ID: id, User: user, Model: model, Workers: workers, Fraction: 1, State: policy.Queued, Submit: 7200}
	}
	nan := job("n", "u3", "m0", 1)
	nan.Fraction = math.NaN()
	s := &policy.Snapshot{Now: 10000, Cluster: oneNode(8)}
	add := func(j *policy.Job) { s.Jobs, s.JobGen = append(s.Jobs, j), append(s.JobGen, uint64(len(s.Jobs)+1)) }
	for _, j := range []*policy.Job{job("a", "u0", "m0", 1), job("b", "u1", "m1", 2), job("d", "u0", "m0", 4), nan} {
		add(j)
	}
	n := 0
	learn := func(user, model string, workers int) {
		n++
		j := job(fmt.Sprintf("done%d", n), user, model, workers)
		j.State, j.Executed = policy.Finished, float64(300*n)
		l.ObserveFinished(j)
	}
	check := func(step string) {
		t.Helper()
		l.Order(s)
		for i, j := range s.Jobs {
			if got, want := *l.levels(&l.slots[i]), l.est.levels(j, false); got != want {
				t.Fatalf("%s: job %s has levels %v by its ids, the model gives %v", step, j.ID, got, want)
			}
		}
	}
	check("nothing learnt")
	learn("u0", "m0", 1)
	check("a's shape, user, model and user × shape")
	learn("u2", "m2", 4)
	check("d's shape; a user no job keyed has")
	add(job("e", "u2", "m2", 4))
	check("a job of a user learnt before it was keyed")
	learn("u2", "m0", 1)
	check("a user × shape no job keyed has")
	add(job("g", "u2", "m5", 1))
	check("a job of a user × shape learnt before it was keyed")
	learn("u0", "m2", 4)
	check("d's user × shape, learnt after it was keyed")
	add(job("h", "u2", "m0", 2))
	check("a job of a user learnt before it was keyed, its user × shape unknown")
	learn("u2", "m9", 2)
	check("h's user × shape, learnt after it was keyed")
	for u := 10; u < 30; u++ {
		learn(fmt.Sprintf("u%d", u), "m3", 8)
	}
	learn("u1", "m3", 2)
	check("b's user and user × shape among many")
	s.Jobs[1].User, s.JobGen[1] = "u11", 100 // features changed: a new stamp
	check("b's new user")
	learn("u3", "m0", 1)
	nan2 := *nan
	nan2.ID = "n2"
	l.est.Observe(&nan2, 60)
	check("the NaN job's user, not its shape")
	if l.est.Version() < 3 {
		t.Fatalf("the model refitted %d times: its levels were never read", l.est.Version())
	}
}
