// Package gossip_e2e runs gossip on a real Nomad cluster: a server and two
// clients whose caravan plugins each run a gossip member (joined through
// a Consul dev agent, service caravan-gossip). The scheduler's side, an
// observer member, must see both clients' memory and GPUs and the link
// between them, under the names Nomad gives the nodes; `caravan nodes`
// prints the same.
package gossip_e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
	"github.com/caravan-dl/caravan/gossip"
)

var (
	cluster *harness.Cluster
	keyFile string
)

func TestMain(m *testing.M) { harness.TestMain(m, run) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "caravan-gossip-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	keyFile = filepath.Join(dir, "gossip.keys")
	if err := os.WriteFile(keyFile, []byte("# primary\nZTJlLWdvc3NpcC1rZXktMDEyMzQ1Njc4OWFiY2RlZiE=\n"), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	ports, err := harness.FreePorts(4)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	each := func(i int) string {
		return fmt.Sprintf("gossip {\n node_name = \"client-%d\"\n bind = \"127.0.0.1:%d\"\n probe_port = %d\n"+
			" consul_service = \"caravan-gossip\"\n encryption_key_file = %q\n probe_interval = \"1s\"\n"+
			" probe_share = 0.5\n publish_interval = \"1s\"\n}\n", i+1, ports[2*i], ports[2*i+1], keyFile)
	}
	return harness.RunCluster(m, harness.Options{Clients: 2, Consul: true, PluginConfigEach: each}, &cluster)
}

// TestSchedulerViewShowsBothClients joins as the scheduler does (an
// observer, found through Consul) and waits for both clients' records.
func TestSchedulerViewShowsBothClients(t *testing.T) {
	keys, err := gossip.LoadKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	oc := gossip.DefaultConfig("e2e-scheduler")
	oc.BindAddr, oc.BindPort, oc.Keys, oc.Observer = "127.0.0.1", 0, keys, true
	oc.ConsulService, oc.ConsulAddress = "caravan-gossip", cluster.ConsulHostPort()
	obs, err := gossip.New(oc)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Shutdown()

	nodes, _, err := cluster.API.Nodes().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"client-1", "client-2"}) {
		t.Fatalf("Nomad nodes %v, want client-1 and client-2 (gossip names must match)", names)
	}
	var v gossip.View
	deadline := time.Now().Add(60 * time.Second)
	for {
		v = obs.View()
		if complete(v) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("view incomplete after 60 s: %+v", v.Nodes)
		}
		time.Sleep(250 * time.Millisecond)
	}
	bw, _ := v.Bandwidth("client-1", "client-2")
	rtt, _ := v.RTT("client-1", "client-2")
	for _, n := range v.Nodes {
		t.Logf("%s: memory %d MiB total, %d MiB free, %d GPUs", n.Name, n.Resources.MemTotalBytes>>20, n.MemFreeBytes()>>20, len(n.Resources.GPUs))
	}
	t.Logf("client-1↔client-2: %.0f Mbit/s measured, RTT %v (Vivaldi)", bw*8/1e6, rtt)

	cmd := exec.Command(cluster.Bins.Caravan, "nodes", "-consul-service", "caravan-gossip", "-key-file", keyFile,
		"-bind", "127.0.0.1:0", "-wait", "1s")
	cmd.Env = append(os.Environ(), "CONSUL_HTTP_ADDR="+cluster.ConsulHostPort())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("caravan nodes: %v\n%s", err, out)
	}
	t.Logf("caravan nodes:\n%s", out)
	for _, want := range []string{"client-1", "client-2", "of 2 (0 busy)", "Mbit/s"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("caravan nodes output lacks %q", want)
		}
	}
}

// complete: both clients with memory, two GPUs each and a measured link.
func complete(v gossip.View) bool {
	for _, name := range []string{"client-1", "client-2"} {
		n, ok := v.Node(name)
		if !ok || !n.HasRes || n.Resources.MemTotalBytes == 0 || len(n.Resources.GPUs) != 2 {
			return false
		}
	}
	_, ok := v.Bandwidth("client-1", "client-2")
	return ok
}
