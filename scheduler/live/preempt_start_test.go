package live

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// A preemption of a job whose tasks are still starting waits for them to
// run (or for preemptStartGrace); a running job is preempted at once.
func TestPreemptionWaitsForStartingTasks(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	s := schedulerOn(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/v1/jobs":
			_, _ = w.Write([]byte(`{"JobModifyIndex": 8}`))
		default:
			_, _ = w.Write([]byte(`[]`)) // the job's allocations
		}
	})
	now := time.Unix(1000, 0)
	cases := []struct {
		name      string
		allocs    jobAllocs
		admitted  float64 // seconds before now
		preempted bool
	}{
		{"starting", jobAllocs{starting: 1}, 1, false},
		{"gang half started", jobAllocs{running: 1, starting: 1}, 1, false},
		{"running", jobAllocs{running: 1}, 1, true},
		{"start hangs past the grace", jobAllocs{starting: 1}, preemptStartGrace.Seconds() + 1, true},
	}
	for _, tc := range cases {
		calls = nil
		job := testJob("j", map[string]any{"command": "x", "gpus": 1})
		g, err := parseGang(job)
		if err != nil {
			t.Fatal(err)
		}
		e := &entry{stub: &jobStub{ID: "j", JobModifyIndex: 7}, phase: phaseRunning, allocs: tc.allocs,
			rec: &record{LastStart: unix(now) - tc.admitted}, job: &cachedJob{index: 7, job: job, gang: g}}
		s.apply(&world{}, []*entry{e}, nil, policy.Decision{Preempts: []string{"j"}}, now)
		mu.Lock()
		got := len(calls) > 0 && calls[0] == "PUT /v1/jobs"
		mu.Unlock()
		if got != tc.preempted || (e.rec.Preemptions == 1) != tc.preempted {
			t.Errorf("%s: preempted = %v (calls %v, record %d preemptions), want %v", tc.name, got, calls, e.rec.Preemptions, tc.preempted)
		}
	}
}
