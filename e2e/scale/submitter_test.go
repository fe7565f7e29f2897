package scale

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// The submitting loop runs in a child process (this test binary again,
// running TestSubmitter), not beside the simulated clients: in their
// process (GOMAXPROCS 2, ~1.4 cores busy at 300 nodes) each HTTP round
// trip waited ~0.1 s for the Go scheduler, so a run measured the harness's
// submit rate instead of Nomad's or caravan's (scheduler/live/README.md,
// "Why submitting into the queue was slow"). CARAVAN_SCALE_SUBMIT=inproc
// keeps the old in-process loop for comparison.

// submitEnv names the child's plan file: {"addr", "jobs": [{id, hcl}]}.
const submitEnv = "CARAVAN_SCALE_SUBMITTER"

type submitPlan struct {
	Addr string      `json:"addr"`
	Jobs []submitJob `json:"jobs"`
}

type submitJob struct {
	ID  string `json:"id"`
	HCL string `json:"hcl"`
}

// submitReport is what the child writes back: when each register began,
// how long each parse and register took, and its own wake-up lag.
type submitReport struct {
	At        map[string]time.Time `json:"at"`
	Parses    []time.Duration      `json:"parses"`
	Registers []time.Duration      `json:"registers"`
	Lags      []time.Duration      `json:"lags"`
}

// submitOut registers gangs from a child process and returns when each
// register began and how long each took, printing the child's figures.
func submitOut(b *testing.B, c *harness.Cluster, gangs []gang, queued bool) (map[string]time.Time, []time.Duration) {
	plan := submitPlan{Addr: c.Server.HTTPAddr}
	for _, g := range gangs {
		plan.Jobs = append(plan.Jobs, submitJob{ID: g.ID, HCL: g.hcl(queued)})
	}
	dir := b.TempDir()
	in, out := filepath.Join(dir, "plan.json"), filepath.Join(dir, "report.json")
	raw, err := json.Marshal(plan)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(in, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSubmitter$", "-test.count", "1", "-test.timeout", "60m")
	cmd.Env = append(os.Environ(), submitEnv+"="+in+","+out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("submitter: %v\n%s", err, msg)
	}
	raw, err = os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	var rep submitReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		b.Fatal(err)
	}
	if len(rep.At) != len(gangs) {
		b.Fatalf("submitter registered %d of %d jobs", len(rep.At), len(gangs))
	}
	fmt.Printf("parse calls (queued=%v, own process): %s\n", queued, latencies(rep.Parses))
	fmt.Printf("10 ms sleeps in the submitting process woke late by: %s\n", latencies(rep.Lags))
	return rep.At, rep.Registers
}

// TestSubmitter is the child side of submitOut; it does nothing unless
// CARAVAN_SCALE_SUBMITTER names its plan and report files.
func TestSubmitter(t *testing.T) {
	files := os.Getenv(submitEnv)
	if files == "" {
		t.Skip("the scale benchmark's submitting process; runs only as its child")
	}
	var in, out string
	if _, err := fmt.Sscanf(replaceComma(files), "%s %s", &in, &out); err != nil {
		t.Fatalf("%s=%q: want plan,report", submitEnv, files)
	}
	raw, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var plan submitPlan
	if err := json.Unmarshal(raw, &plan); err != nil {
		t.Fatalf("plan %s: %v", in, err)
	}
	cl, err := api.NewClient(&api.Config{Address: plan.Addr})
	if err != nil {
		t.Fatal(err)
	}
	rep := submitReport{At: make(map[string]time.Time, len(plan.Jobs))}
	stop := make(chan struct{})
	lags := wakeLag(stop)
	// CARAVAN_SCALE_SUBMIT_PARALLEL=n registers n jobs at once (a bulk
	// submission, e.g. 10,000 jobs queued in well under a minute); default
	// one at a time.
	width := max(envInt("CARAVAN_SCALE_SUBMIT_PARALLEL", 1), 1)
	var mu sync.Mutex
	next := make(chan submitJob)
	var wg sync.WaitGroup
	errs := make(chan error, width)
	for range width {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				p0 := time.Now()
				job, err := cl.Jobs().ParseHCLOpts(&api.JobsParseRequest{JobHCL: j.HCL, Canonicalize: true})
				if err != nil {
					errs <- fmt.Errorf("parse %s: %w", j.ID, err)
					return
				}
				parse, t0 := time.Since(p0), time.Now()
				if _, _, err := cl.Jobs().Register(job, nil); err != nil {
					errs <- fmt.Errorf("register %s: %w", j.ID, err)
					return
				}
				mu.Lock()
				rep.Parses, rep.Registers = append(rep.Parses, parse), append(rep.Registers, time.Since(t0))
				rep.At[j.ID] = t0
				mu.Unlock()
			}
		}()
	}
feed:
	for _, j := range plan.Jobs {
		select {
		case next <- j:
		case err := <-errs:
			t.Error(err)
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	close(stop)
	rep.Lags = <-lags
	if raw, err = json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

func replaceComma(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == ',' {
			b[i] = ' '
		}
	}
	return string(b)
}
