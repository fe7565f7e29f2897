package tune

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/tune"
)

// resumeSpec: 2 trials for 20 steps, the better one promoted to 40, with
// the checkpoint hand-over (the directory is filled in by the test).
const resumeSpec = `
tune "resume" {
  job        = "tune-digits"
  metric     = "val_loss"
  algorithm  = "sha"
  trials     = 2
  seed       = 2
  checkpoint = "%s"
  budget {
    min       = 20
    max       = 40
    reduction = 2
  }
  param "lr" {
    type = "log_uniform"
    min  = 0.02
    max  = 0.3
  }
  param "batch" {
    type   = "choice"
    values = [32]
  }
  param "width" {
    type = "int"
    min  = 16
    max  = 32
  }
}
`

// TestTuneResumesPromotedTrial: on a real Nomad agent, the promoted
// trial's rung-1 job resumes the checkpoint its rung-0 job saved: its
// progress starts at step 30, not 10, and its metric is read at 40. The
// driver runs tasks unisolated (as the agent's user) here, because
// isolated tasks (chroot, user nobody, read-only binds) have no directory
// shared across jobs.
func TestTuneResumesPromotedTrial(t *testing.T) {
	c := startTuneCluster(t, unisolated, 2)
	if _, err := c.RunFile(filepath.Join(repo, "jobspecs", "tune-digits.nomad.hcl"),
		map[string]string{"workloads": filepath.Join(repo, "workloads"), "node_pool": "default"}); err != nil {
		t.Fatal(err)
	}
	shared, err := os.MkdirTemp("", "caravan-tune-ckpt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	specPath := filepath.Join(t.TempDir(), "resume.tune.hcl")
	if err := os.WriteFile(specPath, []byte(strings.Replace(resumeSpec, "%s", shared, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startTuner(t, c, specPath)
	p.finish(t, "tuner", 4*time.Minute)
	cl := &tune.NomadCluster{API: c.API}
	st, err := tune.LoadState(context.Background(), cl, "resume")
	if err != nil {
		t.Fatal(err)
	}
	best, ok := st.Tuner.Best()
	run := st.Runs[best.ID]
	if !ok || best.Budget != 40 || run == nil || run.Rung != 1 {
		t.Fatalf("best %+v run %+v\n%s", best, run, p.logs())
	}
	prog, err := cl.Progress(context.Background(), run.Job, "trial")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(prog), `{"step": 30,`) {
		t.Fatalf("promoted run did not resume at step 20; its progress:\n%s\n%s", prog, p.logs())
	}
	files, _ := filepath.Glob(filepath.Join(shared, "resume-*", "trial-*.pt"))
	if len(files) != 2 {
		t.Fatalf("trial checkpoints %v", files)
	}
	t.Logf("%s", p.out.String())
}
