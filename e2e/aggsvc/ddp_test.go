package aggsvc_e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/aggsvc"
	"github.com/caravan-dl/caravan/aggsvc/auth"
	"github.com/caravan-dl/caravan/e2e/harness"
	consul "github.com/hashicorp/consul/api"
	"github.com/hashicorp/nomad/api"
)

// ddpResult is rank 0's summary line of workloads/train_ddp_aggsvc.py.
type ddpResult struct {
	Params       int                `json:"params"`
	FirstLoss    map[string]float64 `json:"first_loss"`
	LastLoss     map[string]float64 `json:"last_loss"`
	StepSeconds  map[string]float64 `json:"step_seconds"`
	MaxParamDiff float64            `json:"max_param_diff"`
	MaxParam     float64            `json:"max_param"`
}

// TestDDPThroughAggsvc: aggsvc runs as a Nomad job and registers in Consul;
// the DDP job's two workers get its address and their job token from the
// caravan driver and train through the comm hook; the loss falls and the
// parameters match a plain gloo all-reduce twin trained in lockstep.
func TestDDPThroughAggsvc(t *testing.T) {
	ctx := within(t, 6*time.Minute)
	addrs := startAggsvc(t, ctx)
	t.Logf("caravan-aggsvc in Consul: %v", addrs)
	res := runDDP(t, ctx, map[string]string{"steps": "40", "hidden": "64", "mode": "compare"})
	t.Logf("DDP result: %+v", res)
	if res.LastLoss["aggsvc"] >= 0.9*res.FirstLoss["aggsvc"] {
		t.Fatalf("loss through aggsvc did not fall: %v -> %v", res.FirstLoss["aggsvc"], res.LastLoss["aggsvc"])
	}
	if res.MaxParamDiff > 1e-5*max(res.MaxParam, 1) {
		t.Fatalf("parameters through aggsvc differ from gloo's by %g", res.MaxParamDiff)
	}
	meta := serviceMeta(t)
	if meta["jobs"] == "" || meta["cores"] != "2" {
		t.Fatalf("service meta lacks the load: %v", meta)
	}
	// The gradients went through the Nomad-run instance: its metrics (found
	// through the Nomad-registered metrics service) count the job's partitions.
	metrics := scrape(t, auth.AdminToken([]byte(key)))
	want := `aggsvc_partitions_total{job="default/train-ddp-aggsvc",result="ok"}`
	if !strings.Contains(metrics, want) {
		t.Fatalf("aggsvc metrics lack %s:\n%s", want, metrics)
	}
}

// scrape reads /metrics of the instance Nomad registered as
// caravan-aggsvc-metrics, with the bearer token.
func scrape(t *testing.T, token string) string {
	entries, _, err := consulClient(t).Health().Service("caravan-aggsvc-metrics", "", false, nil)
	if err != nil || len(entries) == 0 {
		t.Fatalf("caravan-aggsvc-metrics not in Consul: %v", err)
	}
	e := entries[0].Service
	if e.Address != "127.0.0.1" {
		t.Fatalf("metrics service at %q: the test only talks to loopback", e.Address)
	}
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s:%d/metrics", e.Address, e.Port), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s %s", resp.Status, b)
	}
	return string(b)
}

func startAggsvc(t *testing.T, ctx context.Context) []string {
	t.Helper()
	_, _, err := cluster.API.Variables().Create(&api.Variable{Path: "nomad/jobs/caravan-aggsvc",
		Items: api.VariableItems{"key": key}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cluster.RunFile(repoPath(t, "jobspecs", "aggsvc.nomad.hcl"), map[string]string{
		"caravan": cluster.Bins.Caravan, "consul_addr": cluster.ConsulHostPort(), "cores": "2",
		"host": "127.0.0.1"}) // loopback only
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.StopJob("caravan-aggsvc", 30*time.Second) })
	c := consulClient(t)
	for {
		entries, _, err := c.Health().Service(aggsvc.ServiceName, "", true, nil)
		if err == nil && len(entries) > 0 {
			var out []string
			for _, e := range entries {
				out = append(out, fmt.Sprintf("%s:%d", e.Service.Address, e.Service.Port))
			}
			return out
		}
		select {
		case <-ctx.Done():
			a, _ := cluster.WaitAlloc(context.Background(), "caravan-aggsvc", func(*api.Allocation) bool { return true })
			logs := ""
			if a != nil {
				logs, _ = cluster.Logs(a, "aggsvc", "stderr")
			}
			t.Fatalf("no passing %s in Consul: %v\naggsvc stderr:\n%s", aggsvc.ServiceName, err, logs)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func runDDP(t *testing.T, ctx context.Context, vars map[string]string) ddpResult {
	t.Helper()
	vars["workloads"] = harness.TaskWorkloads
	vars["init"] = "tcp://127.0.0.1:" + freePort(t)
	if _, err := cluster.RunFile(repoPath(t, "jobspecs", "train-ddp-aggsvc.nomad.hcl"), vars); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.StopJob("train-ddp-aggsvc", 30*time.Second) })
	// Collect both workers as they finish; the first failure ends the test
	// with its logs, without waiting for the other worker's timeout.
	var done []*api.Allocation
	for len(done) < 2 {
		a, err := cluster.WaitAlloc(ctx, "train-ddp-aggsvc", func(a *api.Allocation) bool {
			return harness.TaskState("train", "dead")(a) && !seen(done, a)
		})
		if err != nil {
			t.Fatal(err)
		}
		if ts := a.TaskStates["train"]; ts == nil || ts.Failed {
			out, _ := cluster.Logs(a, "train", "stdout")
			errOut, _ := cluster.Logs(a, "train", "stderr")
			t.Fatalf("worker %s failed: %s\nstdout:\n%s\nstderr:\n%s", a.Name, harness.Events(a, "train"), out, errOut)
		}
		done = append(done, a)
	}
	var res *ddpResult
	for _, a := range done {
		out, _ := cluster.Logs(a, "train", "stdout")
		for _, line := range strings.Split(out, "\n") {
			if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
				res = new(ddpResult)
				if err := json.Unmarshal([]byte(rest), res); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if res == nil {
		t.Fatal("rank 0 printed no RESULT line")
	}
	return *res
}

func seen(as []*api.Allocation, a *api.Allocation) bool {
	for _, b := range as {
		if b.ID == a.ID {
			return true
		}
	}
	return false
}

func serviceMeta(t *testing.T) map[string]string {
	entries, _, err := consulClient(t).Health().Service(aggsvc.ServiceName, "", true, nil)
	if err != nil || len(entries) == 0 {
		t.Fatalf("consul: %v (%d entries)", err, len(entries))
	}
	return entries[0].Service.Meta
}

func consulClient(t *testing.T) *consul.Client {
	cfg := consul.DefaultConfig()
	cfg.Address = cluster.ConsulHostPort()
	c, err := consul.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func repoPath(t testing.TB, rel ...string) string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{root}, rel...)...)
}

func within(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}
