package live

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// testJob builds a job with one group per worker config (nil = no GPU task).
func testJob(id string, cfgs ...map[string]any) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	for i, c := range cfgs {
		tg := api.NewTaskGroup("w"+string(rune('0'+i)), 1)
		task := api.NewTask("work", "caravan")
		if c == nil {
			task.Driver = "raw_exec"
			c = map[string]any{"command": "/bin/true"}
		}
		task.Config = c
		tg.AddTask(task)
		job.AddTaskGroup(tg)
	}
	return job
}

func TestParseGangReadsWorkersAndShare(t *testing.T) {
	// args as HCL sends "${var.seconds}" of a number variable: a number.
	frac := map[string]any{"command": "x", "args": []any{"--seconds", 2.0}, "gpu_fraction": 0.5, "gpu_memory": "8GiB"}
	g, err := parseGang(testJob("j", frac, frac, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Workers) != 2 || g.Fraction != 0.5 || g.MemMiB != 8192 {
		t.Fatalf("gang = %+v, want 2 workers of 0.5 GPU and 8192 MiB", g)
	}
	if g.Workers[1].Group != "w1" || g.Workers[1].Task != "work" {
		t.Fatalf("worker 1 = %+v", g.Workers[1])
	}
	// A string fraction runs directly on the driver, so the queue takes it too.
	str, err := parseGang(testJob("s", map[string]any{"command": "x", "gpu_fraction": "0.5", "gpu_memory": "100KiB"}))
	if err != nil || str.Fraction != 0.5 || str.MemMiB != 1 {
		t.Fatalf("string fraction gang = %+v, %v", str, err)
	}
	whole, err := parseGang(testJob("k", map[string]any{"command": "x", "gpus": 1.0}))
	if err != nil || whole.Fraction != 1 || len(whole.Workers) != 1 {
		t.Fatalf("whole GPU gang = %+v, %v", whole, err)
	}
}

func TestParseGangRejectsWhatItCannotPin(t *testing.T) {
	zero := testJob("c", map[string]any{"command": "x", "gpus": 1.0})
	zero.TaskGroups[0].Count = ptr(0)
	clash := testJob("c2", map[string]any{"command": "x", "gpus": 1.0}, map[string]any{"command": "x", "gpus": 1.0})
	clash.TaskGroups[0].Count = ptr(2)
	clash.TaskGroups[1].Name = ptr("w0-1")
	cases := map[string]*api.Job{
		"no worker":    testJob("a", nil),
		"uses one GPU": testJob("b", map[string]any{"command": "x", "gpus": 2.0}),
		"count = 0":    zero,
		`"w0-1" its worker 1 would become already exists`: clash,
		"different GPU": testJob("d", map[string]any{"command": "x", "gpus": 1.0}, map[string]any{"command": "x", "gpu_fraction": 0.5}),
		`gpu_fraction: "1.5" must be a number greater than 0 and at most 1`: testJob("e", map[string]any{"command": "x", "gpu_fraction": 1.5}),
		`gpu_memory: "lots" is not a size`:                                  testJob("f", map[string]any{"command": "x", "gpu_fraction": 0.5, "gpu_memory": "lots"}),
		"gpus and gpu_fraction: set one or the other":                       testJob("g", map[string]any{"command": "x", "gpus": 1.0, "gpu_fraction": 0.5}),
		`gpu_fraction: "abc"`:                                               testJob("h", map[string]any{"command": "x", "gpu_fraction": "abc"}),
		"gpu_fractoin: not a caravan config key":                            testJob("i", map[string]any{"command": "x", "gpu_fractoin": 0.5}),
		`gpu_memory: "NaN" is not a size`:                                   testJob("j", map[string]any{"command": "x", "gpu_fraction": 0.5, "gpu_memory": "NaN"}),
		`gpu_memory: "1e30GiB" is not a size`:                               testJob("k", map[string]any{"command": "x", "gpu_fraction": 0.5, "gpu_memory": "1e30GiB"}),
	}
	for want, job := range cases {
		if _, err := parseGang(job); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to mention %q", *job.ID, err, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
