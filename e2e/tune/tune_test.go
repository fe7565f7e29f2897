package tune

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
	"github.com/caravan-dl/caravan/tune"
	"github.com/hashicorp/nomad/api"
)

// spec is a small synchronous successive halving: 4 trials for 20 steps,
// the best 2 for 40, the best one for 80: 7 dispatches.
const spec = `
tune "e2e" {
  job       = "tune-digits"
  metric    = "val_loss"
  algorithm = "sha"
  trials    = 4
  seed      = 5
  budget {
    min       = 20
    max       = 80
    reduction = 2
  }
  param "lr" {
    type = "log_uniform"
    min  = 0.01
    max  = 0.5
  }
  param "batch" {
    type   = "choice"
    values = [32, 64]
  }
  param "width" {
    type = "int"
    min  = 16
    max  = 64
  }
}
`

// tuner is one `caravan tune run` process.
type tuner struct {
	cmd *exec.Cmd
	out *bytes.Buffer
	err *bytes.Buffer
}

func startTuner(t testing.TB, c *harness.Cluster, specPath string) *tuner {
	t.Helper()
	p := &tuner{out: &bytes.Buffer{}, err: &bytes.Buffer{}}
	p.cmd = exec.Command(caravanBin, "tune", "run", "-poll", "200ms", specPath)
	p.cmd.Env = append(os.Environ(), "NOMAD_ADDR="+c.Server.HTTPAddr)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.err
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *tuner) logs() string { return p.out.String() + "\n--- stderr ---\n" + p.err.String() }

// finish waits for the tuner to exit successfully, failing the test (named
// what in the message) if it fails or is still running after timeout.
func (p *tuner) finish(t testing.TB, what string, timeout time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, p.logs())
		}
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		t.Fatalf("%s did not finish\n%s", what, p.logs())
	}
}

// unisolated is the plugin config of clusters whose trials share a
// checkpoint directory: isolated tasks (chroot, user nobody, read-only
// binds) have none shared across jobs.
const unisolated = "no_isolation = true\n    allow_root = true\n    default_user = \"root\""

// startTuneCluster starts a Nomad agent with gpus simulated GPUs and the
// caravan driver (plugin config pluginConfig), stopped when tb ends.
func startTuneCluster(tb testing.TB, pluginConfig string, gpus int) *harness.Cluster {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := harness.Start(ctx, harness.Options{GPUs: harness.GPUs{Model: "Simulated A100 40GB", MemoryMiB: 40960, Count: gpus},
		PluginConfig: pluginConfig})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Log(err)
		}
	})
	return c
}

// TestTuneEndToEnd runs the digits search on a real Nomad agent, kills the
// tuner (SIGKILL) after the first rung has results, restarts it, and checks
// that it resumes without dispatching any rung twice and ends with the
// best configuration.
func TestTuneEndToEnd(t *testing.T) {
	c := startTuneCluster(t, "", 2)
	if _, err := c.RunFile(filepath.Join(repo, "jobspecs", "tune-digits.nomad.hcl"),
		map[string]string{"workloads": harness.TaskWorkloads, "node_pool": "default"}); err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(t.TempDir(), "e2e.tune.hcl")
	if err := os.WriteFile(specPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	cl := &tune.NomadCluster{API: c.API}

	first := startTuner(t, c, specPath)
	waitFor(t, 3*time.Minute, "two trials reported rung 0", func() bool {
		st, err := tune.LoadState(context.Background(), cl, "e2e")
		if err == nil && failed(st) > 0 {
			t.Fatalf("a trial failed\n%s", first.logs())
		}
		return err == nil && reported(st) >= 2
	}, first)
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()

	second := startTuner(t, c, specPath)
	second.finish(t, "restarted tuner", 5*time.Minute)
	if !strings.Contains(second.err.String(), "resuming tuning job") || !strings.Contains(second.out.String(), "best: trial") {
		t.Fatalf("restart output:\n%s", second.logs())
	}
	st, err := tune.LoadState(context.Background(), cl, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	checkFinal(t, st, c.API)
	t.Logf("first run:\n%s\nsecond run:\n%s", first.out.String(), second.out.String())

	status := exec.Command(caravanBin, "tune", "status", "e2e")
	status.Env = append(os.Environ(), "NOMAD_ADDR="+c.Server.HTTPAddr)
	b, err := status.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "finished in") || !strings.Contains(string(b), "val_loss") {
		t.Fatalf("tune status: %v\n%s", err, b)
	}
}

// reported counts trials with at least one rung result.
func reported(st *tune.State) int {
	n := 0
	for _, tr := range st.Tuner.Trials {
		if len(tr.Metrics) > 0 && tr.Status != tune.Failed {
			n++
		}
	}
	return n
}

func failed(st *tune.State) int {
	n := 0
	for _, tr := range st.Tuner.Trials {
		if tr.Status == tune.Failed {
			n++
		}
	}
	return n
}

// checkFinal: 4 → 2 → 1 with one dispatch per trial and rung (no rung
// dispatched twice across the restart), the losers stopped with their
// results kept, one trial done at 80 steps with a real loss.
func checkFinal(t *testing.T, st *tune.State, a *api.Client) {
	t.Helper()
	counts := map[tune.Status]int{}
	for _, tr := range st.Tuner.Trials {
		counts[tr.Status]++
		if tr.Status == tune.Stopped && len(tr.Metrics) == 0 {
			t.Errorf("stopped trial %d lost its result", tr.ID)
		}
	}
	if counts[tune.Done] != 1 || counts[tune.Stopped] != 3 || st.Ended.IsZero() {
		t.Fatalf("final statuses %v, ended %v", counts, st.Ended)
	}
	best, _ := st.Tuner.Best()
	if best.Budget != 80 || !(best.Last() > 0 && best.Last() < 2.4) {
		t.Fatalf("best %+v", best)
	}
	jobs, _, err := a.Jobs().PrefixList("tune-digits/dispatch-")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 7 {
		var ids []string
		for _, j := range jobs {
			ids = append(ids, j.ID)
		}
		t.Fatalf("%d trial jobs dispatched, want 7 (4+2+1): %v", len(jobs), ids)
	}
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool, p *tuner) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s\n%s", what, p.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
