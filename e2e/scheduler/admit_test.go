package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// placementOf reads worker group → (node ID, GPU UUID) from the job's
// caravan.placement meta ("group=node/gpu/uuid/fraction/mem;...").
func placementOf(t *testing.T, job *api.Job) map[string][2]string {
	t.Helper()
	out := map[string][2]string{}
	for _, part := range strings.Split(job.Meta["caravan.placement"], ";") {
		group, rest, _ := strings.Cut(part, "=")
		f := strings.Split(rest, "/")
		if len(f) != 5 {
			t.Fatalf("job %s: bad caravan.placement %q", *job.ID, job.Meta["caravan.placement"])
		}
		out[group] = [2]string{f[0], f[2]}
	}
	return out
}

// A queued job is admitted into the real pool and runs on exactly the node
// and GPU the scheduler chose.
func TestQueuedJobRunsOnThePinnedGPU(t *testing.T) {
	startScheduler(t, "-policy", "fifo")
	submit(t, work{ID: "pinned", Seconds: 1, Tag: "pin"})
	waitDone(t, "pinned", 1, 90*time.Second)

	job := jobInfo(t, "pinned")
	if *job.NodePool != "default" || job.Meta["caravan.admitted"] == "" {
		t.Fatalf("job not admitted into default: pool %s meta %v", *job.NodePool, job.Meta)
	}
	want := placementOf(t, job)["w0"]
	as := allocs(t, "pinned")
	if len(as) != 1 {
		t.Fatalf("want one allocation, got %s", describe(as))
	}
	if as[0].NodeID != want[0] {
		t.Errorf("ran on node %s, scheduler chose %s", as[0].NodeID, want[0])
	}
	out := stdout(t, "pinned")
	if !strings.Contains(out, "cuda="+want[1]+" ") {
		t.Errorf("task did not see CUDA_VISIBLE_DEVICES=%s:\n%s", want[1], out)
	}
}

// A 2-worker gang that does not fit waits whole (no worker starts alone)
// while smaller jobs run, then both workers start together.
func TestGangWaitsWholeThenStartsWhole(t *testing.T) {
	// No parking (park_test.go) in this test: a slow machine could make
	// the gang wait past -park-after, which is a job version by design.
	p := startScheduler(t, "-policy", "fifo", "-park-after", "10m")
	small := []string{"small-a", "small-b", "small-c"}
	for _, id := range small {
		submit(t, work{ID: id, Seconds: 6})
	}
	waitFor(t, 90*time.Second, "three small jobs run", func() (bool, string) {
		n := 0
		for _, id := range small {
			n += count(allocs(t, id), running)
		}
		return n == 3, ""
	})
	submit(t, work{ID: "gang", Workers: 2, Seconds: 1})

	// One GPU is free but the gang needs two: nothing of it may start.
	waitFor(t, 30*time.Second, "the gang to be explained", func() (bool, string) {
		j := p.job("gang")
		return j != nil && j.State == "queued" && j.Reason != "", "not in the queue view yet"
	})
	stillSmall := 0
	for _, id := range small {
		stillSmall += count(allocs(t, id), running)
	}
	if got := allocs(t, "gang"); stillSmall == 3 && len(got) != 0 {
		t.Fatalf("gang started partially while it could not fit: %s", describe(got))
	}
	// Waiting writes no job versions: the reason lives in the queue view.
	rounds := p.metric("caravan_scheduler_rounds_total")
	waitFor(t, 30*time.Second, "three more rounds", func() (bool, string) {
		return p.metric("caravan_scheduler_rounds_total") >= rounds+3, ""
	})
	if j := jobInfo(t, "gang"); *j.Version != 0 || j.Meta["caravan.reason"] != "" {
		t.Fatalf("waiting gang rewritten: version %d, reason meta %q", *j.Version, j.Meta["caravan.reason"])
	}

	waitDone(t, "gang", 2, 90*time.Second)
	as := allocs(t, "gang")
	if len(as) != 2 || as[0].EvalID != as[1].EvalID || *as[0].Job.Version != *as[1].Job.Version {
		t.Fatalf("gang was not placed by one evaluation of one job version: %s", describe(as))
	}
	firstEnd := time.Time{}
	for _, id := range small {
		for _, a := range allocs(t, id) {
			if end := a.TaskStates["work"].FinishedAt; !end.IsZero() && (firstEnd.IsZero() || end.Before(firstEnd)) {
				firstEnd = end
			}
		}
	}
	started := as[0].TaskStates["work"].StartedAt
	if firstEnd.IsZero() || started.Before(firstEnd) {
		t.Errorf("gang started at %s, before any small job ended (%s)", started, firstEnd)
	}
}
