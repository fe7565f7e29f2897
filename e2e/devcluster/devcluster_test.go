// Package devcluster_test checks the local-cluster launcher itself: a Nomad
// server with a client and a Consul dev agent, wired together, as `make demo`
// and the aggregator and serving tests use it.
package devcluster_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
)

var cluster *harness.Cluster

func TestMain(m *testing.M) { harness.TestMain(m, run) }

func run(m *testing.M) int {
	return harness.RunCluster(m, harness.Options{Clients: 1, Consul: true}, &cluster)
}

// Nomad's client registers itself in the cluster's Consul, which proves the
// agents were pointed at it: the path aggsvc and serve registrations take.
func TestNomadRegistersInConsul(t *testing.T) {
	if cluster.Consul == nil || cluster.ConsulHostPort() == "" {
		t.Fatal("cluster started with Consul: true has no Consul agent")
	}
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		services, err := consulServices(cluster.Consul.HTTPAddr)
		if err == nil {
			if _, ok := services["nomad-client"]; ok {
				return
			}
			last = fmt.Sprint(services)
		} else {
			last = err.Error()
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("nomad-client never registered in Consul; last catalog: %s", last)
}

func consulServices(addr string) (map[string][]string, error) {
	resp, err := http.Get(addr + "/v1/catalog/services")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("consul catalog: %s", resp.Status)
	}
	var out map[string][]string
	return out, json.NewDecoder(resp.Body).Decode(&out)
}
