package policy

import "testing"

// ServiceAt: a running job's service accrues from its Accrual's Since
// (not before it), a job that does not run or does not accrue reads its
// fields.
func TestServiceAt(t *testing.T) {
	j := &Job{State: Running, Attained: 40, Executed: 10, Accrual: Accrual{On: true, Since: 100, GPUs: 4}}
	for _, c := range []struct{ now, attained, executed float64 }{
		{90, 40, 10},  // before Since: nothing yet
		{100, 40, 10}, // at Since
		{110, 80, 20}, // 10 s at 4 GPUs
		{100.5, 42, 10.5},
	} {
		if a, e := j.ServiceAt(c.now); a != c.attained || e != c.executed {
			t.Errorf("at %v: %v/%v, want %v/%v", c.now, a, e, c.attained, c.executed)
		}
	}
	j.State = Queued // preempted without folding: the fields are the service
	if a, e := j.ServiceAt(200); a != 40 || e != 10 {
		t.Errorf("a queued job accrued: %v/%v", a, e)
	}
	j.State, j.Accrual.On = Running, false
	if a, e := j.ServiceAt(200); a != 40 || e != 10 {
		t.Errorf("a job without accrual accrued: %v/%v", a, e)
	}
}
