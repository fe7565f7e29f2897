package scheduler

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// The example queued gang in jobspecs/ runs as users would submit it: two
// half-GPU workers admitted together, and the scheduler's own service
// jobspec is valid for Nomad.
func TestJobspecsForTheScheduler(t *testing.T) {
	startScheduler(t, "-policy", "fifo")
	job, err := cluster.RunFile(filepath.Join(repo, "jobspecs", "sched-train.nomad.hcl"),
		map[string]string{"workloads": harness.TaskWorkloads, "seconds": "2"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { purge(*job.ID) })
	waitDone(t, *job.ID, 2, 90*time.Second)
	as := allocs(t, *job.ID)
	if len(as) != 2 || as[0].EvalID != as[1].EvalID {
		t.Fatalf("the gang was not admitted in one piece: %s", describe(as))
	}
	if got := jobInfo(t, *job.ID).TaskGroups[0].Tasks[0].Config["gpu_fraction"]; got != 0.5 {
		t.Errorf("admitted worker gpu_fraction = %v, want the asked 0.5", got)
	}

	hcl, err := os.ReadFile(filepath.Join(repo, "jobspecs", "caravan-scheduler.nomad.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := cluster.API.Jobs().ParseHCLOpts(&api.JobsParseRequest{JobHCL: string(hcl), Canonicalize: true})
	if err != nil {
		t.Fatalf("caravan-scheduler.nomad.hcl: %v", err)
	}
	resp, _, err := cluster.API.Jobs().Validate(svc, nil)
	if err != nil || resp.Error != "" || len(resp.ValidationErrors) > 0 {
		t.Fatalf("caravan-scheduler.nomad.hcl does not validate: %v %+v", err, resp)
	}
	if *svc.NodePool == "caravan-queue" {
		t.Fatal("the scheduler must not queue itself")
	}
}
