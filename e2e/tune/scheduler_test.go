package tune

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
	"github.com/caravan-dl/caravan/tune"
)

const schedSpec = `
tune "e2e-sched" {
  job       = "tune-digits"
  metric    = "val_loss"
  algorithm = "sha"
  trials    = 3
  seed      = 2
  budget {
    min       = 20
    max       = 60
    reduction = 3
  }
  param "lr" {
    type = "log_uniform"
    min  = 0.01
    max  = 0.5
  }
  param "batch" {
    type   = "choice"
    values = [32]
  }
  param "width" {
    type = "int"
    min  = 16
    max  = 64
  }
}
`

// TestTuneThroughScheduler: the jobspec as shipped (node_pool
// caravan-queue) with `caravan scheduler -policy fluid`: the scheduler
// leaves the parameterized template alone, the tuner registers each trial
// as "tune-digits/trial-…" (Nomad refuses updates of dispatched jobs, and
// admission is an update), the scheduler admits every one, and the search
// finishes with a best configuration.
func TestTuneThroughScheduler(t *testing.T) {
	c := startTuneCluster(t, "", 2)
	startScheduler(t, c, "fluid", "caravan/scheduler/state")
	if _, err := c.RunFile(filepath.Join(repo, "jobspecs", "tune-digits.nomad.hcl"),
		map[string]string{"workloads": harness.TaskWorkloads}); err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(t.TempDir(), "sched.tune.hcl")
	if err := os.WriteFile(specPath, []byte(schedSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	run := startTuner(t, c, specPath)
	run.finish(t, "tuner", 5*time.Minute)
	st, err := tune.LoadState(context.Background(), &tune.NomadCluster{API: c.API}, "e2e-sched")
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := st.Tuner.Best(); !ok || b.Status != tune.Done || !strings.Contains(run.out.String(), "best: trial") {
		t.Fatalf("best %+v\n%s", b, run.logs())
	}
	parent, _, err := c.API.Jobs().Info("tune-digits", nil)
	if err != nil || parent.NodePool == nil || *parent.NodePool != "caravan-queue" {
		t.Fatalf("the template left the queue pool: %v %v", err, parent.NodePool)
	}
	for _, r := range st.Runs {
		if !strings.HasPrefix(r.Job, "tune-digits"+tune.TrialInfix) {
			t.Fatalf("trial job %s was not registered for the queue", r.Job)
		}
		j, _, err := c.API.Jobs().Info(r.Job, nil)
		if err != nil || j.NodePool == nil || *j.NodePool == "caravan-queue" {
			t.Fatalf("trial %s not admitted out of the queue: %v", r.Job, err)
		}
	}
	t.Logf("through the scheduler:\n%s", run.out.String())
}

// startScheduler runs `caravan scheduler -policy pol` on c, its state in
// the Nomad Variable state (a lock beside it), until stop is called or tb
// ends, and waits for the queue pool it makes.
func startScheduler(tb testing.TB, c *harness.Cluster, pol, state string) (stop func()) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var schedLog bytes.Buffer
	sched := exec.Command(caravanBin, "scheduler", "-policy", pol, "-listen", addr, "-token", "e2e",
		"-state-path", state, "-lock-path", state+"-lock",
		"-quantum", "1s", "-debounce", "100ms", "-progress-interval", "1s", "-lock-ttl", "10s", "-lock-delay", "1s")
	sched.Env = append(os.Environ(), "NOMAD_ADDR="+c.Server.HTTPAddr)
	sched.Stdout, sched.Stderr = &schedLog, &schedLog
	if err := sched.Start(); err != nil {
		tb.Fatal(err)
	}
	stop = sync.OnceFunc(func() {
		_ = sched.Process.Kill()
		_ = sched.Wait()
		if tb.Failed() {
			tb.Logf("scheduler (%s) log:\n%s", pol, tailOf(schedLog.String(), 8000))
		}
	})
	tb.Cleanup(stop)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if p, _, err := c.API.NodePools().Info("caravan-queue", nil); err == nil && p != nil {
			return stop
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the scheduler made no caravan-queue pool\n%s", schedLog.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
