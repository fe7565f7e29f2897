package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
)

func tracesDir(t *testing.T) string { return repo.TestData(t) }

func TestDispatchErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if err := dispatch([]string{"nosuch"}, &out, &errb); err == nil || !strings.Contains(errb.String(), "sim") {
		t.Fatalf("unknown command: err %v, usage %q", err, errb.String())
	}
	if err := dispatch([]string{"sim", "run"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "--trace") {
		t.Fatalf("missing trace: %v", err)
	}
	err := dispatch([]string{"sim", "run", "--trace", "tiresias:" + filepath.Join(tracesDir(t), "tiresias", "60_job.csv"), "--gpus", "4"}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "60_job.csv:") || !strings.Contains(err.Error(), "8 GPUs") {
		t.Fatalf("job larger than cluster: %v", err)
	}
}

func TestSimCompareWritesResults(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := dispatch([]string{"sim", "compare", "--trace", "tiresias:" + filepath.Join(tracesDir(t), "tiresias", "60_job.csv"),
		"--gpus", "8", "--gpus-per-node", "4", "--policies", "fifo,tiresias-las,tiresias-gittins", "--out", out, "--quiet"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "| tiresias-las") || !strings.Contains(stderr.String(), "offered load") {
		t.Fatalf("table or load line missing:\n%s\n%s", stdout.String(), stderr.String())
	}
	for _, f := range []string{"fifo_yarn-summary.json", "tiresias-las_consolidated-jobs.csv", "jct_cdf.svg", "queue.svg", "gpus.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}
