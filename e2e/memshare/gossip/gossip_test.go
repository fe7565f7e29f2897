// Package memsharegossip_e2e runs memshare with donors found through
// gossip: a real Nomad server and two clients whose caravan plugins have
// a gossip block and a memshare block with no donor list. Each node knows
// only its own donor; the other must come from the gossip view
// (memshare.GossipDonors) for a k = 1 + r = 1 stripe to be placed at all.
package memsharegossip_e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
	"github.com/caravan-dl/caravan/gossip"
	"github.com/caravan-dl/caravan/memshare"
	"github.com/hashicorp/nomad/api"
)

const key = "e2e-memshare-gossip-key-0123456789"

var (
	cluster *harness.Cluster
	keyFile string
	binds   []string // each client's gossip address
	apis    []string // each client's lease API address
)

func TestMain(m *testing.M) { harness.TestMain(m, run) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "caravan-memshare-gossip-e2e-")
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
	ports, err := harness.FreePorts(8)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	for i := range 2 {
		binds = append(binds, fmt.Sprintf("127.0.0.1:%d", ports[4*i]))
		apis = append(apis, fmt.Sprintf("127.0.0.1:%d", ports[4*i+3]))
	}
	each := func(i int) string {
		g := fmt.Sprintf("gossip {\n node_name = \"client-%d\"\n bind = %q\n probe_port = %d\n join = [%q]\n"+
			" encryption_key_file = %q\n probe_interval = \"1h\"\n publish_interval = \"1s\"\n}\n",
			i+1, binds[i], ports[4*i+1], binds[1-i], keyFile)
		ms := fmt.Sprintf("memshare {\n key = %q\n node = \"client-%d\"\n nbd_addr = \"127.0.0.1:%d\"\n api_addr = %q\n"+
			" slab_size = \"4MiB\"\n headroom = \"64MiB\"\n data_shards = 1\n parity_shards = 1\n}\n",
			key, i+1, ports[4*i+2], apis[i])
		return g + ms
	}
	return harness.RunCluster(m, harness.Options{Clients: 2, PluginConfigEach: each}, &cluster)
}

// spillResult is workloads/memshare_spill.py's summary line.
type spillResult struct {
	Batches    int  `json:"batches"`
	BadBatches int  `json:"bad_batches"`
	Verified   bool `json:"verified"`
}

// TestConsumerFindsDonorsThroughGossip: donors lend on both clients and
// advertise over gossip (an observer member sees both entries through
// memshare.GossipDonors); a consumer, whose plugin lists no donors, places
// its mirrored stripes on both nodes and every batch verifies.
func TestConsumerFindsDonorsThroughGossip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	workloads := harness.TaskWorkloads
	if _, err := cluster.RunFile(filepath.Join(root, "jobspecs", "memshare-donor.nomad.hcl"),
		map[string]string{"workloads": workloads, "memory": "512", "seconds": "300"}); err != nil {
		t.Fatal(err)
	}
	defer cluster.StopJob("memshare-donor", 30*time.Second)
	waitLending(t, ctx)
	seen := waitGossipDonors(t, ctx)
	t.Logf("gossip view's donors: %+v", seen)

	if _, err := cluster.RunFile(filepath.Join(root, "jobspecs", "memshare-consumer.nomad.hcl"),
		map[string]string{"workloads": workloads, "remote_memory": "64MiB", "batches": "48", "hold_seconds": "10"}); err != nil {
		t.Fatal(err)
	}
	defer cluster.StopJob("memshare-consumer", 30*time.Second)
	alloc, err := cluster.WaitAlloc(ctx, "memshare-consumer", harness.TaskState("spill", "running"))
	if err != nil {
		t.Fatal(err)
	}
	// While the task runs, both nodes hold its slabs: the stripe spans the
	// node gossip reported.
	waitBothLend(t, ctx)
	done, err := cluster.WaitAlloc(ctx, "memshare-consumer", func(a *api.Allocation) bool {
		return a.ID == alloc.ID && (a.ClientStatus == "complete" || a.ClientStatus == "failed")
	})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cluster.Logs(done, "spill", "stdout")
	var res spillResult
	if err := json.Unmarshal([]byte(lastLine(out)), &res); err != nil || done.ClientStatus != "complete" || !res.Verified || res.Batches != 48 {
		errOut, _ := cluster.Logs(done, "spill", "stderr")
		t.Fatalf("consumer %s: %+v %v\n%s\n%s\nstderr: %s", done.ClientStatus, res, err, harness.Events(done, "spill"), out, errOut)
	}
	t.Logf("consumer on %s: %s", done.NodeName, lastLine(out))
}

// waitGossipDonors joins the clients' gossip as an observer and waits
// until memshare.GossipDonors lists both nodes' donors.
func waitGossipDonors(t *testing.T, ctx context.Context) []memshare.DonorInfo {
	t.Helper()
	keys, err := gossip.LoadKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	oc := gossip.DefaultConfig("e2e-observer")
	oc.BindAddr, oc.BindPort, oc.Keys, oc.Observer, oc.Join = "127.0.0.1", 0, keys, true, binds
	obs, err := gossip.New(oc)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Shutdown()
	src := memshare.NewGossipDonors(obs)
	for {
		ds := src.Donors()
		var nodes []string
		for _, d := range ds {
			nodes = append(nodes, d.Node)
		}
		if slices.Equal(nodes, []string{"client-1", "client-2"}) {
			return ds
		}
		select {
		case <-ctx.Done():
			t.Fatalf("gossip never showed both donors: %+v", ds)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitLending polls both donors until each can lend a slab.
func waitLending(t *testing.T, ctx context.Context) {
	t.Helper()
	waitDonors(t, ctx, "offer 64 MiB", func(st memshare.DonorStatus) bool { return st.Accepting && st.Free >= 64<<20 })
}

// waitBothLend polls until both donors have lent something.
func waitBothLend(t *testing.T, ctx context.Context) {
	t.Helper()
	waitDonors(t, ctx, "lend a slab", func(st memshare.DonorStatus) bool { return st.Used > 0 })
}

func waitDonors(t *testing.T, ctx context.Context, what string, ok func(memshare.DonorStatus) bool) {
	t.Helper()
	for _, addr := range apis {
		c := memshare.NewAPIClient(addr, []byte(key), nil)
		for {
			st, err := c.Status(ctx)
			if err == nil && ok(st) {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("donor at %s did not %s: %+v %v", addr, what, st, err)
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
