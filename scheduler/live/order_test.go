package live

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// The orders events keep are the orders a full sort gives, through any mix
// of new, changed (also in submit time) and purged jobs and allocations.
func TestMirrorOrdersMatchAFullSort(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	m := newMirror()
	all := func(*jobStub) bool { return true }
	for step := 0; step < 3000; step++ {
		id := fmt.Sprintf("j%02d", rng.Intn(60))
		switch r := rng.Intn(10); {
		case r < 5:
			m.putJob(&jobStub{ID: id, SubmitTime: int64(rng.Intn(20)), ModifyIndex: uint64(step)})
		case r < 6:
			m.dropJob(id)
		default:
			m.putAlloc(&api.AllocationListStub{ID: fmt.Sprintf("%s-a%d", id, rng.Intn(7)), JobID: id,
				CreateIndex: uint64(rng.Intn(5)), ModifyIndex: uint64(step)})
		}
		if step%97 != 0 {
			continue
		}
		got := m.world(all)
		fresh := &mirror{jobs: m.jobs, allocs: m.allocs}
		fresh.resort()
		fresh.regroup()
		if !reflect.DeepEqual(got.jobs, fresh.order) {
			t.Fatalf("step %d: job order %v, a full sort gives %v", step, ids(got.jobs), ids(fresh.order))
		}
		for job, as := range fresh.byJob {
			if !reflect.DeepEqual(got.allocs[job], as) {
				t.Fatalf("step %d: allocations of %s differ from a full sort", step, job)
			}
		}
		if len(got.allocs) != len(fresh.byJob) {
			t.Fatalf("step %d: %d jobs with allocations, a full grouping gives %d", step, len(got.allocs), len(fresh.byJob))
		}
	}
}

func ids(js []*jobStub) []string {
	var out []string
	for _, j := range js {
		out = append(out, fmt.Sprintf("%s@%d", j.ID, j.SubmitTime))
	}
	return out
}
