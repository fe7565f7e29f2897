package scheduler

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// colocateJobs are the interference e2e's jobs, by Gavel type (V100):
// Transformer at batch 16 beside itself slows each side 1.14× (under the
// 1.5 bound); ResNet-50 at batch 16 beside itself 3.16×, and beside the
// Transformer 3.13× / 7.11× (over it). testdata/gavel_v100_colocate.json
// is the part of Gavel's simulation_throughputs.json with these two types.
var colocateJobs = map[string]map[string]string{
	"low-a":  {"caravan.model": "Transformer", "caravan.batch_size": "16"},
	"low-b":  {"caravan.model": "Transformer", "caravan.batch_size": "16"},
	"high-a": {"caravan.model": "ResNet-50", "caravan.batch_size": "16"},
	"high-b": {"caravan.model": "ResNet-50", "caravan.batch_size": "16"},
	"high-c": {"caravan.model": "ResNet-50", "caravan.batch_size": "16"},
}

// Five jobs that could share (half a GPU each) on four GPUs, placed by
// measured pair slowdowns: the low-interference pair shares one GPU, every
// high-interference job gets a GPU of its own (no pair over the bound ever
// shares), all five run at once and complete.
func TestInterferenceBoundedColocatesOnlyPairsUnderTheBound(t *testing.T) {
	profiles, err := filepath.Abs(filepath.Join("testdata", "gavel_v100_colocate.json"))
	if err != nil {
		t.Fatal(err)
	}
	waitAllGPUsFree(t)
	startScheduler(t, "-policy", "fifo+interference-bounded", "-colocate-profiles", profiles,
		"-colocate-gpu", "v100", "-colocate-rule", "oracle")
	for _, id := range []string{"high-a", "low-a", "high-b", "low-b", "high-c"} {
		submit(t, work{ID: id, Fraction: 0.5, Seconds: 8, Meta: colocateJobs[id]})
	}
	waitFor(t, 60*time.Second, "five jobs running on four GPUs", func() (bool, string) {
		n := 0
		for id := range colocateJobs {
			n += count(allocs(t, id), running)
		}
		return n == len(colocateJobs), clusterState(t)
	})
	gpuOf := map[string][2]string{} // job → (node, GPU UUID) it runs on
	holders := map[[2]string][]string{}
	for id := range colocateJobs {
		as := allocs(t, id)
		at := placementOf(t, jobInfo(t, id))["w0"]
		if len(as) != 1 || as[0].NodeID != at[0] {
			t.Fatalf("%s: want one allocation on node %s, got %s", id, at[0], describe(as))
		}
		gpuOf[id] = at
		holders[at] = append(holders[at], id)
	}
	if gpuOf["low-a"] != gpuOf["low-b"] {
		t.Errorf("the pair under the bound does not share a GPU: low-a on %v, low-b on %v", gpuOf["low-a"], gpuOf["low-b"])
	}
	for _, id := range []string{"high-a", "high-b", "high-c"} {
		if h := holders[gpuOf[id]]; len(h) != 1 {
			t.Errorf("%s shares GPU %v with %v: its measured slowdown there is over the bound", id, gpuOf[id], h)
		}
	}
	for id := range colocateJobs {
		waitDone(t, id, 1, 60*time.Second)
	}
	// Each sharer saw the GPU the scheduler chose (the driver's grant).
	for _, id := range []string{"low-a", "low-b"} {
		if out := stdout(t, id); !strings.Contains(out, "cuda="+gpuOf[id][1]+" ") {
			t.Errorf("%s did not run on GPU %s:\n%s", id, gpuOf[id][1], out)
		}
	}
}
