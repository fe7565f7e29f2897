package order

import (
	"fmt"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// A tracked Lucid reads an unchanged job's levels again only when one
// that it lacks is learnt: its own shape, user, model or user × shape,
// whether few levels were learnt since (compared one by one) or many (a
// lookup). Levels of other jobs leave it alone.
func TestLucidLevelsReadAgainOnlyWhenOwnLearnt(t *testing.T) {
	l := newLucid(t, LucidConfig{})
	job := func(id, user, model string, workers int) *policy.Job {
		return &policy.Job{ID: id, User: user, Model: model, Workers: workers, Fraction: 1, State: policy.Queued, Submit: 10}
	}
	a, b, d := job("a", "u0", "m0", 1), job("b", "u1", "m1", 2), job("d", "u0", "m0", 4)
	s := &policy.Snapshot{Now: 1000, Cluster: oneNode(8), Jobs: []*policy.Job{a, b, d}, JobGen: []uint64{1, 2, 3}}
	l.Order(s)
	n := 0
	learn := func(user, model string, workers int) {
		n++
		j := job(fmt.Sprintf("done%d", n), user, model, workers)
		j.State, j.Executed = policy.Finished, 600
		l.ObserveFinished(j)
	}
	check := func(step string, want ...bool) {
		t.Helper()
		l.beginKeys(s)
		for i, w := range want {
			if got := l.levelsStale(i); got != w {
				t.Errorf("%s: job %s read again %v, want %v", step, s.Jobs[i].ID, got, w)
			}
		}
		l.endKeys()
		l.Order(s) // reads what is stale, stamps the rest
		for i, j := range s.Jobs {
			if lv := l.est.levels(j, false); l.slots[i].lv != lv {
				t.Fatalf("%s: job %s keeps levels %v, the model gives %v", step, j.ID, l.slots[i].lv, lv)
			}
		}
	}
	learn("u0", "m0", 1)
	check("a's shape, user, model", true, false, true)
	learn("u2", "m2", 4)
	check("d's shape", false, false, true) // d's user × shape is still unknown
	learn("u2", "m0", 1)
	check("another user × shape", false, false, false)
	learn("u0", "m2", 4)
	check("d's user × shape", false, false, true)
	for u := 10; u < 10+scanSince+2; u++ {
		learn(fmt.Sprintf("u%d", u), "m3", 8)
	}
	check("many other users", false, false, false)
	learn("u1", "m3", 16)
	for u := 30; u < 30+scanSince+2; u++ {
		learn(fmt.Sprintf("u%d", u), "m3", 8)
	}
	check("b's user among many", false, true, false)
}
