package driver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/aggsvc/auth"
)

// fakeConsul serves /v1/health/service/<name> like Consul: only passing
// instances when ?passing is set.
func fakeConsul(t *testing.T, services map[string][]map[string]any) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, "/v1/health/service/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		if _, passing := r.URL.Query()["passing"]; !passing {
			t.Errorf("query must ask for passing instances only: %s", r.URL)
		}
		entries := services[name]
		if entries == nil {
			entries = []map[string]any{}
		}
		w.Header().Set("X-Consul-Index", "1")
		_ = json.NewEncoder(w).Encode(entries)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func instance(nodeAddr, svcAddr string, port int) map[string]any {
	return map[string]any{
		"Node":    map[string]any{"Node": "n", "Address": nodeAddr},
		"Service": map[string]any{"Service": "agg", "Address": svcAddr, "Port": port},
	}
}

func TestStartTask_AggregatorFromConsul(t *testing.T) {
	consul := fakeConsul(t, map[string][]map[string]any{
		"caravan-aggsvc": {instance("10.0.0.2", "", 7000), instance("10.0.0.1", "10.0.1.1", 7001)},
	})
	conf := simConfig(t.TempDir(), 1)
	conf.ConsulAddress = consul.URL
	conf.AggregatorKey = "test-aggsvc-key-0123456789"
	td := newTestDriver(t, conf)

	task := td.newTask(t, "ddp", "env; echo END_OF_ENV", TaskConfig{Aggregator: "caravan-aggsvc"})
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatal(err)
	}
	td.waitExit(t, task.ID)
	env := stdoutEnv(t, task)
	want := map[string]string{
		"CARAVAN_AGGREGATOR_SERVICE": "caravan-aggsvc",
		"CARAVAN_AGGREGATOR_ADDRS":   "10.0.0.2:7000,10.0.1.1:7001",
		"CARAVAN_AGGREGATOR_JOB":     "default/train-ddp",
		"CARAVAN_AGGREGATOR_TOKEN":   auth.JobToken([]byte(conf.AggregatorKey), "default/train-ddp"),
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}

	missing := td.newRejectedTask(t, "nosvc", TaskConfig{Aggregator: "absent", GPUFraction: "0.5"})
	_, _, err := td.StartTask(missing)
	if err == nil || !strings.Contains(err.Error(), `aggregator: Consul has no healthy instance of service "absent"`) {
		t.Fatalf("missing service: got %v", err)
	}
	if f := freeFraction(t, td, 0); f != 1 {
		t.Errorf("a task whose aggregator is missing must hold no GPU, free = %v", f)
	}
}

func TestStartTask_AggregatorConsulDown(t *testing.T) {
	conf := simConfig(t.TempDir(), 1)
	conf.ConsulAddress = "http://127.0.0.1:1" // nothing listens on port 1
	td := newTestDriver(t, conf)
	task := td.newRejectedTask(t, "down", TaskConfig{Aggregator: "caravan-aggsvc"})
	_, _, err := td.StartTask(task)
	if err == nil || !strings.Contains(err.Error(), `aggregator: looking up Consul service "caravan-aggsvc" at 127.0.0.1:1`) {
		t.Fatalf("got %v", err)
	}
}
