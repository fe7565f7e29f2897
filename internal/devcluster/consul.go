package devcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// consulConfig renders a Consul dev agent's HCL: everything on loopback,
// DNS, gRPC-TLS (a fixed 8503 that would collide between clusters) and the
// WAN pool off, so nothing listens beyond what Caravan uses.
func consulConfig(http, grpc, server, serfLAN int) string {
	return fmt.Sprintf(`node_name = "caravan-dev"
bind_addr = "127.0.0.1"
client_addr = "127.0.0.1"
advertise_addr = "127.0.0.1"
disable_update_check = true
log_level = "INFO"
ports {
  http = %d
  grpc = %d
  server = %d
  serf_lan = %d
  serf_wan = -1
  dns = -1
  grpc_tls = -1
}
`, http, grpc, server, serfLAN)
}

// startConsul launches `consul agent -dev` (state in memory) and returns the
// agent; its HTTPAddr is what Nomad's consul block and clients use.
func startConsul(bin, dir string) (*Agent, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, errors.New("devcluster: " + bin + " is missing: run `make tools` first")
	}
	ports, err := FreePorts(4)
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "consul.hcl")
	if err := os.WriteFile(cfg, []byte(consulConfig(ports[0], ports[1], ports[2], ports[3])), 0o644); err != nil {
		return nil, err
	}
	a := &Agent{
		Name:     "consul",
		HTTPAddr: fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
		Dir:      dir,
		LogPath:  filepath.Join(dir, "consul.log"),
		bin:      bin,
		args:     []string{"agent", "-dev", "-config-file=" + cfg},
	}
	return a, a.Start()
}

// ConsulHostPort is the Consul agent's HTTP address without its scheme, the
// form CONSUL_HTTP_ADDR and Nomad's consul block take; "" without Consul.
func (c *Cluster) ConsulHostPort() string {
	if c.Consul == nil {
		return ""
	}
	return strings.TrimPrefix(c.Consul.HTTPAddr, "http://")
}

// nomadConsulBlock wires Nomad agents to the Consul agent, so jobs'
// `service` blocks with provider "consul" register there.
func nomadConsulBlock(addr string) string {
	return fmt.Sprintf("consul {\n  address = %q\n}\n", addr)
}

// waitConsul polls Consul until it has elected itself leader.
func waitConsul(ctx context.Context, a *Agent) error {
	for {
		if consulLeader(a.HTTPAddr) {
			return nil
		}
		if a.Exited() {
			return errors.New("devcluster: consul exited during start (see " + a.LogPath + ")")
		}
		select {
		case <-ctx.Done():
			return errors.New("devcluster: consul has no leader (see " + a.LogPath + ")")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func consulLeader(addr string) bool {
	resp, err := http.Get(addr + "/v1/status/leader")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	return resp.StatusCode == 200 && len(strings.Trim(string(b), `" `+"\n")) > 0
}
