// Package serve tests Caravan serve on a real Nomad + Consul dev cluster:
// the front end (raw_exec, like the scheduler) and two PyTorch model workers
// (caravan driver, isolated, a quarter of a simulated GPU each) run as Nomad
// jobs, the front
// end finds the workers in Consul, serves requests, and follows a scale-down.
package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
	consul "github.com/hashicorp/consul/api"
)

var (
	repo       string
	caravanBin string
)

func TestMain(m *testing.M) { harness.TestMain(m, run) }

func run(m *testing.M) int {
	return harness.RunWithCaravan(m, &repo, &caravanBin)
}

const (
	apiToken    = "e2e-api-token"
	workerToken = "e2e-worker-token"
)

func TestServeOnNomadAndConsul(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import torch").Run(); err != nil {
		t.Skip("no /usr/bin/python3 with torch (Debian python3-torch)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := harness.Start(ctx, harness.Options{Consul: true, RawExec: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	cc := consul.DefaultConfig()
	cc.Address = c.ConsulHostPort()
	cons, err := consul.NewClient(cc)
	if err != nil {
		t.Fatal(err)
	}

	workers, err := c.RunFile(filepath.Join(repo, "jobspecs", "serve-workers.nomad.hcl"), map[string]string{
		"workloads": harness.TaskWorkloads, "worker_token": workerToken, "count": "2", "gpu_fraction": "0.25"})
	if err != nil {
		t.Fatal(err)
	}
	front, err := c.RunFile(filepath.Join(repo, "jobspecs", "serve.nomad.hcl"), map[string]string{
		"caravan": caravanBin, "api_token": apiToken, "worker_token": workerToken, "consul_addr": c.ConsulHostPort()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.StopJob(*front.ID, 20*time.Second)
		c.StopJob(*workers.ID, 20*time.Second)
	})

	t.Cleanup(func() {
		if t.Failed() {
			dumpAllocs(t, c, *workers.ID, *front.ID)
		}
	})
	waitPassing(ctx, t, cons, "caravan-serve-worker", 2)
	addr := waitPassing(ctx, t, cons, "caravan-serve", 1)[0]
	url := "http://" + addr

	// The front end discovers the workers: requests get served.
	waitUntil(ctx, t, "the front end serves a request", func() bool {
		code, _ := infer(url, `{"tokens":[5,6,7],"max_tokens":4,"deadline_ms":20000}`)
		return code == 200
	})
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := infer(url, fmt.Sprintf(`{"input_len":%d,"max_tokens":%d,"deadline_ms":20000}`, 4+i*8, 2+i))
			if code != 200 || !strings.Contains(body, `"status":"ok"`) {
				errs <- fmt.Sprintf("%d %s", code, body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("request under load: %s", e)
	}
	if code, _ := infer(url, `{"max_tokens":99999}`); code != 400 {
		t.Errorf("oversized max_tokens: %d, want 400", code)
	}
	if code := status(url+"/v1/models/lstm-gen/infer", "wrong"); code != 401 {
		t.Errorf("wrong token: %d, want 401", code)
	}
	waitUntil(ctx, t, "metrics show 2 workers", func() bool { return metric(url, `caravan_serve_workers{model="lstm-gen"}`) == "2" })

	// SIGKILL one worker while a burst is in flight: every request still
	// gets exactly one answer (retried on the other worker, or failed fast).
	killOneWorkerDuringBurst(ctx, t, c, *workers.ID, url)
	// Nomad restarts the killed task; Consul and then the front end follow.
	waitUntil(ctx, t, "the killed worker is back", func() bool {
		code, _ := infer(url, `{"input_len":8,"max_tokens":2,"deadline_ms":20000}`)
		return code == 200 && len(waitPassing(ctx, t, cons, "caravan-serve-worker", 2)) == 2 &&
			metric(url, `caravan_serve_workers{model="lstm-gen"}`) == "2"
	})

	// Scale the workers down: the front end follows Consul and keeps serving.
	// (A new job version, not `job scale`: scaling is refused while the
	// first deployment is still running.)
	if _, err := c.RunFile(filepath.Join(repo, "jobspecs", "serve-workers.nomad.hcl"), map[string]string{
		"workloads": harness.TaskWorkloads, "worker_token": workerToken, "count": "1", "gpu_fraction": "0.25"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(ctx, t, "metrics show 1 worker", func() bool { return metric(url, `caravan_serve_workers{model="lstm-gen"}`) == "1" })
	// The stopped worker may fail a batch on its way out (503, retried
	// or failed fast); the one that stays serves.
	waitUntil(ctx, t, "a request is served after the scale-down", func() bool {
		code, _ := infer(url, `{"input_len":16,"max_tokens":4,"deadline_ms":20000}`)
		return code == 200
	})
	if ok, _ := strconv.ParseFloat(metric(url, `caravan_serve_requests_total{model="lstm-gen",outcome="ok"}`), 64); ok < 10 {
		t.Errorf("ok requests counted: %v, want >= 10", ok)
	}
}

func killOneWorkerDuringBurst(ctx context.Context, t *testing.T, c *harness.Cluster, jobID, url string) {
	stubs, _, err := c.API.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	for _, s := range stubs {
		if s.ClientStatus == "running" {
			victim = s.ID
			break
		}
	}
	if victim == "" {
		t.Fatal("no running worker allocation to kill")
	}
	const n = 12
	answers := make(chan string, n)
	for i := range n {
		go func() {
			_, body := infer(url, fmt.Sprintf(`{"input_len":%d,"max_tokens":120,"deadline_ms":20000}`, 256+i))
			var r struct{ Status string }
			json.Unmarshal([]byte(body), &r)
			answers <- r.Status
		}()
	}
	a, _, err := c.API.Allocations().Info(victim, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.API.Allocations().Signal(a, nil, "worker", "SIGKILL"); err != nil {
		t.Fatalf("kill worker: %v", err)
	}
	got := map[string]int{}
	for range n {
		select {
		case s := <-answers:
			got[s]++
		case <-ctx.Done():
			t.Fatalf("requests lost after a worker was killed: answers so far %v", got)
		}
	}
	t.Logf("answers with one worker killed mid-burst: %v", got)
	for s := range got {
		if s != "ok" && s != "worker_failed" && s != "deadline_unmeetable" {
			t.Errorf("answer %q: want ok, or a clear failure", s)
		}
	}
	if got["ok"] == 0 {
		t.Error("no request served by the surviving worker")
	}
}

// dumpAllocs logs the jobs' allocations, task events and stderr tails.
func dumpAllocs(t *testing.T, c *harness.Cluster, jobs ...string) {
	for _, j := range jobs {
		stubs, _, _ := c.API.Jobs().Allocations(j, false, nil)
		for _, s := range stubs {
			a, _, err := c.API.Allocations().Info(s.ID, nil)
			if err != nil {
				continue
			}
			for task := range a.TaskStates {
				t.Logf("%s %s/%s: %s", j, a.ID[:8], task, harness.Events(a, task))
				if l, err := c.Logs(a, task, "stderr"); err == nil {
					t.Logf("stderr: %s", tail(l, 1500))
				}
			}
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func infer(url, body string) (int, string) {
	req, _ := http.NewRequest("POST", url+"/v1/models/lstm-gen/infer", bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+apiToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func status(url, token string) int {
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// metric reads one series' value from /metrics ("" when absent).
func metric(url, series string) string {
	req, _ := http.NewRequest("GET", url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+apiToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	return ""
}

func waitPassing(ctx context.Context, t *testing.T, c *consul.Client, svc string, n int) []string {
	t.Helper()
	var addrs []string
	waitUntil(ctx, t, fmt.Sprintf("%d passing %s in Consul", n, svc), func() bool {
		es, _, err := c.Health().Service(svc, "", true, nil)
		if err != nil {
			return false
		}
		addrs = addrs[:0]
		for _, e := range es {
			addrs = append(addrs, fmt.Sprintf("%s:%d", e.Service.Address, e.Service.Port))
		}
		return len(addrs) >= n
	})
	return addrs
}

func waitUntil(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting until %s", what)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
