package live

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// A running job's kept view accrues: rounds that only move its service
// leave it (and so its stamp) alone, while the policy reads the same
// service as the record's; a pause or a new share re-bases it.
func TestKeptServiceAccrues(t *testing.T) {
	r := &record{Attained: 30, Executed: 10}
	j := &policy.Job{State: policy.Running}
	r.accrue(1000, 2)
	if !rebase(j, r, 2) {
		t.Fatal("the first accruing round did not set the job's accrual")
	}
	for now := 1005.0; now <= 1100; now += 5 {
		r.accrue(now, 2)
		if rebase(j, r, 2) {
			t.Fatalf("at %v: only service moved, yet the job changed", now)
		}
		if a, e := j.ServiceAt(now); a != r.Attained || e != r.Executed {
			t.Fatalf("at %v: the policy reads %v/%v, the record says %v/%v", now, a, e, r.Attained, r.Executed)
		}
	}
	if !rebase(j, r, 1) {
		t.Fatal("a new share kept the old accrual")
	}
	r.pause()
	if !rebase(j, r, 1) || j.Accrual.On || j.Attained != r.Attained {
		t.Fatalf("a paused job still accrues: %+v", j)
	}
	if rebase(j, r, 1) {
		t.Fatal("a paused job changed with nothing moved")
	}
}
