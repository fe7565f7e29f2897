package sim

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// serviceLog is testFIFO recording each job's attained service and
// executed time when it finishes.
type serviceLog struct {
	testFIFO
	attained, executed map[string]float64
}

func (p *serviceLog) ObserveFinished(j *policy.Job) {
	p.attained[j.ID], p.executed[j.ID] = j.Attained, j.Executed
}

// With ServiceDelay D of StartLatency L, a job holds its GPUs from its
// start but gains service only from D on, as live, where it accrues once
// its tasks run; JCTs do not change. 1 GPU: a (t=0, 100 s) works 10..110
// with L = 10, served from 4: 106 GPU·s. b (t=5, 20 s) starts when a ends
// at 110, works 120..140, served from 114: 26.
func TestServiceDelayHoldsGPUsWithoutService(t *testing.T) {
	for _, tc := range []struct {
		delay, a, b float64
	}{
		{0, 110, 30}, // the default: all of L is service
		{4, 106, 26},
		{50, 100, 20}, // clamped to L: service only while working
	} {
		p := &serviceLog{attained: map[string]float64{}, executed: map[string]float64{}}
		jobs := []Job{job("a", 0, 100, 1), job("b", 5, 20, 1)}
		r, err := Run(Config{Check: true, StartLatency: 10, ServiceDelay: tc.delay}, cluster(t, 1, 1), jobs, p)
		if err != nil {
			t.Fatal(err)
		}
		if got := jctOf(r); !near(got["a"], 110) || !near(got["b"], 135) {
			t.Errorf("delay %v: JCTs %v, want a=110 b=135", tc.delay, got)
		}
		if !near(p.attained["a"], tc.a) || !near(p.attained["b"], tc.b) || !near(p.executed["a"], tc.a) {
			t.Errorf("delay %v: attained %v executed %v, want a=%v b=%v", tc.delay, p.attained, p.executed, tc.a, tc.b)
		}
	}
}

// A job preempted before its tasks run holds its GPUs until they run and
// then StopLatency more, as live, where the preemption waits for them. 1
// GPU, L = 4, S = 1: a starts at 0; b arrives at 2 and preempts it. With
// D = 0 a's GPU drains 2..3, b works 7..17 (JCT 15) and a, resumed when b's
// GPU drains at 18, works 22..122. With D = 3 it drains until 3 + 1 = 4:
// b works 8..18 (JCT 16), a 23..123.
func TestServiceDelayPreemptedBeforeTasksRun(t *testing.T) {
	for _, tc := range []struct{ delay, a, b float64 }{{0, 122, 15}, {3, 123, 16}} {
		jobs := []Job{job("a", 0, 100, 1), job("b", 2, 10, 1)}
		r, err := Run(Config{Check: true, StartLatency: 4, StopLatency: 1, ServiceDelay: tc.delay}, cluster(t, 1, 1), jobs, &preemptForNewcomer{})
		if err != nil {
			t.Fatal(err)
		}
		if got := jctOf(r); !near(got["a"], tc.a) || !near(got["b"], tc.b) {
			t.Errorf("delay %v: JCTs %v, want a=%v b=%v", tc.delay, got, tc.a, tc.b)
		}
	}
}
