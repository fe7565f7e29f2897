package serve

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/internal/repo"
	consul "github.com/hashicorp/consul/api"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// startConsul runs a real Consul dev agent on loopback ports (bin/consul,
// built by `make tools`) and returns a client for it.
func startConsul(t *testing.T) *consul.Client {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Skip(err)
	}
	bin := filepath.Join(root, "bin", "consul")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("bin/consul missing (run `make tools`)")
	}
	ports := make([]int, 3)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`node_name = "serve-test"
bind_addr = "127.0.0.1"
client_addr = "127.0.0.1"
advertise_addr = "127.0.0.1"
disable_update_check = true
ports {
  http = %d
  server = %d
  serf_lan = %d
  serf_wan = -1
  dns = -1
  grpc = -1
  grpc_tls = -1
}
`, ports[0], ports[1], ports[2])
	if err := os.WriteFile(filepath.Join(dir, "consul.hcl"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "agent", "-dev", "-config-file="+filepath.Join(dir, "consul.hcl"))
	log, _ := os.Create(filepath.Join(dir, "consul.log"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	cc := consul.DefaultConfig()
	cc.Address = "127.0.0.1:" + strconv.Itoa(ports[0])
	c, err := consul.NewClient(cc)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if leader, err := c.Status().Leader(); err == nil && leader != "" {
			return c
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "consul.log"))
			t.Fatalf("consul has no leader after 60s:\n%s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Discovery follows a real Consul: workers registered under the model's tag
// join, a deregistered one leaves, and requests keep being served.
func TestDiscoveryFollowsConsul(t *testing.T) {
	c := startConsul(t)
	w1, w2 := newFakeWorker(t, 0), newFakeWorker(t, 0)
	register := func(id string, fw *fakeWorker, tag string) {
		host, port, _ := net.SplitHostPort(strings.TrimPrefix(fw.srv.URL, "http://"))
		p, _ := strconv.Atoi(port)
		if err := c.Agent().ServiceRegister(&consul.AgentServiceRegistration{
			ID: id, Name: DefaultWorkerService, Tags: []string{tag}, Address: host, Port: p}); err != nil {
			t.Fatal(err)
		}
	}
	register("w1", w1, "m")
	register("w2", w2, "m")
	register("other", newFakeWorker(t, 0), "another-model") // not ours

	fe := startFE(t, "orloj", 10*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go (&Discovery{Consul: c, WorkerToken: "wtok", Wait: 2 * time.Second}).Run(ctx, fe.f)

	waitFor(t, func() bool { return gauge(fe.f.m.workers.WithLabelValues("m")) == 2 })
	if code, _, raw := fe.post(t, testToken, `{"input_len":1}`); code != 200 {
		t.Fatalf("with two discovered workers: %d %s", code, raw)
	}
	if err := c.Agent().ServiceDeregister("w1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return gauge(fe.f.m.workers.WithLabelValues("m")) == 1 })
	before := w2.batches.Load()
	if code, r, raw := fe.post(t, testToken, `{"input_len":1}`); code != 200 || r.Worker != strings.TrimPrefix(w2.srv.URL, "http://") {
		t.Fatalf("after w1 left: %d %s", code, raw)
	}
	if w2.batches.Load() != before+1 {
		t.Error("the remaining worker did not serve the request")
	}
}

func gauge(g prometheus.Gauge) float64 {
	var m dto.Metric
	if g.Write(&m) != nil {
		return -1
	}
	return m.GetGauge().GetValue()
}
