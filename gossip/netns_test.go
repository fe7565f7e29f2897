//go:build linux

package gossip

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	"github.com/hashicorp/go-hclog"
)

// Real links: three members in their own network namespaces on a bridge,
// each pair shaped with HTB to its own rate; every measured bandwidth
// must be within 15 % of the configured rate.

type nsNode struct{ ns, ip, dev string }

// nsRates are the shaped pair rates in Mbit/s. The fast pair is 300, not
// 1000: on the shared 2-core VM, 1 Gbit/s (and even 500 Mbit/s) through
// veth + HTB is CPU-bound under load (834 of 1000 Mbit/s measured at load
// average 29), which would test the CPU, not the probe. On a quiet machine
// 1000 Mbit/s measured within 4–11 % (README).
var nsRates = map[[2]int]int{{0, 1}: 50, {1, 2}: 200, {0, 2}: 300}

// goodput is the TCP payload rate an HTB limit of mbit allows: HTB counts
// whole Ethernet frames (1514 bytes for 1448 of payload with timestamps).
func goodput(mbit int) float64 { return float64(mbit) * 1448 / 1514 }

const helperEnv = "CARAVAN_GOSSIP_NETNS_HELPER"

func TestRealLinksMeasuredWithin15Percent(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the network-namespace test in -short mode")
	}
	if reason := netnsUnavailable(); reason != "" {
		t.Skip("network namespaces not permitted here: " + reason)
	}
	nodes := setupNetns(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	writeKey(t, keyFile)
	var procs []*exec.Cmd
	for i, n := range nodes {
		join := ""
		if i > 0 {
			join = nodes[0].ip + ":7946"
		}
		cmd := exec.Command("ip", "netns", "exec", n.ns, os.Args[0], "-test.run=^TestNetnsHelperProcess$", "-test.v")
		cmd.Env = append(os.Environ(), helperEnv+"=1", "H_NAME="+fmt.Sprintf("ns%d", i), "H_IP="+n.ip,
			"H_JOIN="+join, "H_KEY="+keyFile, "H_OUT="+filepath.Join(dir, fmt.Sprintf("view%d.json", i)),
			"H_STOP="+filepath.Join(dir, "stop"))
		logf, _ := os.Create(filepath.Join(dir, fmt.Sprintf("log%d", i)))
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(dir, "stop"), nil, 0o600)
		for _, p := range procs {
			done := make(chan struct{})
			go func() { _ = p.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = p.Process.Kill()
			}
		}
	})
	var v View
	deadline := time.Now().Add(90 * time.Second)
	for {
		v = readHelperView(filepath.Join(dir, "view0.json"))
		if allPairsSampled(v, 4) {
			break
		}
		if time.Now().After(deadline) {
			logs, _ := os.ReadFile(filepath.Join(dir, "log0"))
			t.Fatalf("not every pair measured 4 times within 90 s; view %+v\nlog of ns0:\n%s", v.Nodes, tail(string(logs), 3000))
		}
		time.Sleep(500 * time.Millisecond)
	}
	for pair, mbit := range nsRates {
		a, b := fmt.Sprintf("ns%d", pair[0]), fmt.Sprintf("ns%d", pair[1])
		bw, _ := v.Bandwidth(a, b)
		got := bw * 8 / 1e6
		want := goodput(mbit)
		t.Logf("%s↔%s: configured %d Mbit/s (TCP goodput %.1f), measured %.1f Mbit/s (%+.1f %% of goodput, %+.1f %% of the rate)",
			a, b, mbit, want, got, 100*(got/want-1), 100*(got/float64(mbit)-1))
		if math.Abs(got/want-1) > 0.15 {
			t.Errorf("%s↔%s measured %.1f Mbit/s, goodput of the configured %d Mbit/s is %.1f (off by more than 15 %%)", a, b, got, mbit, want)
		}
	}
	if t.Failed() {
		logProbes(t, dir, len(nodes))
	}
	// Placement on the measured links takes the fast pair.
	if got := placeOnView(t, v); !slices.Equal(got, []string{"ns0", "ns2"}) {
		t.Errorf("network-aware placement chose %v, want the 300 Mbit/s pair [ns0 ns2]", got)
	}
}

// placeOnView places a 2-worker gang with network-aware placement on
// three one-GPU nodes whose links come from the measured view.
func placeOnView(t *testing.T, v View) []string {
	c := policy.Cluster{Links: policy.NewLinks()}
	for i := range 3 {
		name := fmt.Sprintf("ns%d", i)
		c.Nodes = append(c.Nodes, policy.Node{Name: name, Rack: "r0", GPUs: []policy.GPU{{Index: 0, MemoryMiB: 16384}}})
		for _, l := range v.NodeLinks(name) {
			c.Links.Set(l.A, l.B, l.BandwidthBps*8/1e9)
		}
	}
	j := &policy.Job{ID: "ddp", Workers: 2, Fraction: 1, State: policy.Queued}
	d, err := policy.DemandOf(j)
	if err != nil {
		t.Fatal(err)
	}
	p, why := place.NewNetwork(place.NetworkConfig{}).Place(j, d, policy.NewCapacity(&c))
	if why != "" {
		t.Fatal(why)
	}
	var nodes []string
	for _, s := range p.Slots {
		nodes = append(nodes, s.Node)
	}
	slices.Sort(nodes)
	return nodes
}

// logProbes prints every member's probe samples, to tell a stalled
// sample from a misread link when the test fails.
func logProbes(t *testing.T, dir string, n int) {
	for i := range n {
		logs, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("log%d", i)))
		for _, l := range strings.Split(string(logs), "\n") {
			if strings.Contains(l, "bandwidth probe") {
				t.Log(l)
			}
		}
	}
}

func allPairsSampled(v View, n int) bool {
	if v.index == nil {
		return false
	}
	for pair := range nsRates {
		a, b := fmt.Sprintf("ns%d", pair[0]), fmt.Sprintf("ns%d", pair[1])
		samples := 0
		for _, x := range [][2]string{{a, b}, {b, a}} {
			node, _ := v.Node(x[0])
			for _, l := range node.Links {
				if l.Peer == x[1] {
					samples = max(samples, l.Samples)
				}
			}
		}
		if samples < n {
			return false
		}
	}
	return true
}

func readHelperView(path string) View {
	var nodes []NodeView
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &nodes) != nil {
		return View{}
	}
	v := View{Nodes: nodes, index: map[string]int{}}
	for i, n := range nodes {
		v.index[n.Name] = i
	}
	return v
}

// TestNetnsHelperProcess is the member run inside one namespace by
// TestRealLinksMeasuredWithin15Percent; it does nothing otherwise.
func TestNetnsHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process for TestRealLinksMeasuredWithin15Percent")
	}
	keys, err := LoadKeyFile(os.Getenv("H_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig(os.Getenv("H_NAME"))
	c.BindAddr, c.BindPort, c.Keys = os.Getenv("H_IP"), 7946, keys
	if j := os.Getenv("H_JOIN"); j != "" {
		c.Join = []string{j}
	}
	c.Probe.Interval = 200 * time.Millisecond
	c.Probe.Share = 0.5 // the test wants samples fast; production uses 1 %
	// α stays the production 0.3 and the test waits for 4 samples: with
	// 0.5 and 3, one sample stalled by a loaded host took a third of the
	// 300 Mbit/s pair's estimate off (244 Mbit/s, 6 CPU hogs on 2 cores).
	c.Probe.TargetDuration = 500 * time.Millisecond
	c.Tune = steadyTune
	c.Logger = hclog.New(&hclog.LoggerOptions{Name: c.Name, Level: hclog.Debug})
	m, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown()
	_ = m.SetResources(Resources{MemTotalBytes: 1 << 30})
	end := time.Now().Add(120 * time.Second)
	for time.Now().Before(end) {
		if _, err := os.Stat(os.Getenv("H_STOP")); err == nil {
			return
		}
		if len(c.Join) > 0 && m.numMembers() < 2 {
			_, _ = m.Join(c.Join)
		}
		b, _ := json.Marshal(m.View().Nodes)
		out := os.Getenv("H_OUT")
		_ = os.WriteFile(out+".tmp", b, 0o600)
		_ = os.Rename(out+".tmp", out)
		time.Sleep(300 * time.Millisecond)
	}
}

func netnsUnavailable() string {
	if os.Geteuid() != 0 {
		return "not root"
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not installed (iproute2)"
		}
	}
	name := fmt.Sprintf("cvgprobe%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return "ip netns add: " + strings.TrimSpace(string(out))
	}
	_ = exec.Command("ip", "netns", "del", name).Run()
	return ""
}

func sh(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// setupNetns builds a bridge namespace and three member namespaces, and
// shapes each pair in both directions with an HTB class per peer.
func setupNetns(t *testing.T) []nsNode {
	id := os.Getpid() % 100000
	sw := fmt.Sprintf("cvg%d-sw", id)
	sh(t, "ip", "netns", "add", sw)
	var nodes []nsNode
	t.Cleanup(func() {
		for _, n := range nodes {
			_ = exec.Command("ip", "netns", "del", n.ns).Run()
		}
		_ = exec.Command("ip", "netns", "del", sw).Run()
	})
	sh(t, "ip", "-n", sw, "link", "add", "br0", "type", "bridge")
	sh(t, "ip", "-n", sw, "link", "set", "br0", "up")
	for i := range 3 {
		n := nsNode{ns: fmt.Sprintf("cvg%d-%d", id, i), ip: fmt.Sprintf("10.231.0.%d", i+1), dev: "eth0"}
		nodes = append(nodes, n)
		host, port := fmt.Sprintf("cvg%dh%d", id, i), fmt.Sprintf("cvg%dp%d", id, i)
		sh(t, "ip", "netns", "add", n.ns)
		sh(t, "ip", "link", "add", host, "type", "veth", "peer", "name", port)
		sh(t, "ip", "link", "set", host, "netns", n.ns)
		sh(t, "ip", "link", "set", port, "netns", sw)
		sh(t, "ip", "-n", sw, "link", "set", port, "master", "br0")
		sh(t, "ip", "-n", sw, "link", "set", port, "up")
		sh(t, "ip", "-n", n.ns, "link", "set", host, "name", n.dev)
		sh(t, "ip", "-n", n.ns, "addr", "add", n.ip+"/24", "dev", n.dev)
		sh(t, "ip", "-n", n.ns, "link", "set", n.dev, "up")
		sh(t, "ip", "-n", n.ns, "link", "set", "lo", "up")
		sh(t, "tc", "-n", n.ns, "qdisc", "add", "dev", n.dev, "root", "handle", "1:", "htb", "default", "99", "r2q", "100")
	}
	for pair, mbit := range nsRates {
		for _, d := range [][2]int{{pair[0], pair[1]}, {pair[1], pair[0]}} {
			src, dst := nodes[d[0]], nodes[d[1]]
			class := fmt.Sprintf("1:%d", 10+d[1])
			rate := fmt.Sprintf("%dmbit", mbit)
			sh(t, "tc", "-n", src.ns, "class", "add", "dev", src.dev, "parent", "1:", "classid", class, "htb", "rate", rate, "ceil", rate)
			sh(t, "tc", "-n", src.ns, "filter", "add", "dev", src.dev, "parent", "1:", "protocol", "ip", "u32",
				"match", "ip", "dst", dst.ip+"/32", "flowid", class)
		}
	}
	return nodes
}

func writeKey(t *testing.T, path string) {
	if err := os.WriteFile(path, []byte("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
