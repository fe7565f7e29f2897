package live

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// A finished job whose task exited non-zero, or that the driver refused,
// shows as failed with why and its gang's shape (bug: "finished", 0×0).
func TestFailedJobsShowFailedWithWhy(t *testing.T) {
	exit3 := []*api.AllocationListStub{
		{TaskGroup: "w0", CreateIndex: 1, ClientStatus: "complete", TaskStates: map[string]*api.TaskState{"work": {State: "dead"}}}, // preempted run
		{TaskGroup: "w0", CreateIndex: 2, ClientStatus: "failed", TaskStates: map[string]*api.TaskState{"work": {State: "dead", Failed: true,
			Events: []*api.TaskEvent{{Type: api.TaskStarted}, {Type: api.TaskTerminated, ExitCode: 3}, {Type: api.TaskNotRestarting, DisplayMessage: "Policy allows no restarts"}}}}},
	}
	refused := []*api.AllocationListStub{{TaskGroup: "w0", CreateIndex: 1, ClientStatus: "failed", TaskStates: map[string]*api.TaskState{"work": {Failed: true,
		Events: []*api.TaskEvent{{Type: api.TaskDriverFailure, DriverError: "gpus and gpu_fraction: set one or the other"}}}}}}
	ok := []*api.AllocationListStub{{TaskGroup: "w0", ClientStatus: "complete", TaskStates: map[string]*api.TaskState{"work": {State: "dead"}}}}
	if got := failure(exit3); !strings.Contains(got, `task "work" in group "w0" failed: exit code 3`) {
		t.Errorf("exit 3: %q", got)
	}
	if got := failure(refused); !strings.Contains(got, "Driver Failure: gpus and gpu_fraction") {
		t.Errorf("refused: %q", got)
	}
	if got := failure(ok); got != "" {
		t.Errorf("success reads as %q", got)
	}
	g := gang{Workers: []worker{{Group: "w0", Task: "work"}, {Group: "w1", Task: "work"}}, Fraction: 0.5}
	e := &entry{stub: &jobStub{ID: "f"}, phase: phaseDone, rec: &record{}, job: &cachedJob{gang: g}, failed: failure(exit3)}
	v := buildView("p", []*entry{e}, nil, nil, time.Unix(1, 0))
	if j := v.Jobs[0]; j.State != "failed" || !strings.Contains(j.Reason, "exit code 3") || j.Workers != 2 || j.Fraction != 0.5 {
		t.Fatalf("view %+v", j)
	}
}
