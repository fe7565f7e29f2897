package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/gossip"
)

func TestNodesPrintsTheGossipView(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keyFile, []byte("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, _ := gossip.LoadKeyFile(keyFile)
	var ms []*gossip.Member
	for _, name := range []string{"gpu-a", "gpu-b"} {
		c := gossip.DefaultConfig(name)
		c.BindAddr, c.BindPort, c.Keys, c.Probe.Disabled = "127.0.0.1", 0, keys, true
		if len(ms) > 0 {
			c.Join = []string{ms[0].Addr()}
		}
		m, err := gossip.New(c)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Shutdown()
		ms = append(ms, m)
	}
	_ = ms[0].SetResources(gossip.Resources{MemTotalBytes: 64 << 30, MemUsedBytes: 16 << 30, MemDonatableBytes: 4 << 30,
		GPUs: []gossip.GPU{{Index: 0, UsedFraction: 0.5}, {Index: 1}}})
	_ = ms[1].SetResources(gossip.Resources{MemTotalBytes: 32 << 30, MemUsedBytes: 8 << 30})
	_ = ms[0].SetSection(gossip.SectionLinks, []gossip.Link{{Peer: "gpu-b", BandwidthBps: 125e6, Samples: 1, UnixMillis: time.Now().UnixMilli()}})

	// gpu-b must have heard gpu-a's records before the observer asks it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if n, ok := ms[1].View().Node("gpu-a"); ok && len(n.Links) == 1 && n.HasRes {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("gpu-b never heard gpu-a")
		}
	}
	var out, errb bytes.Buffer
	err := runNodes([]string{"-join", ms[1].Addr(), "-key-file", keyFile, "-bind", "127.0.0.1:0", "-wait", "300ms"}, &out, &errb)
	if err != nil {
		t.Fatalf("caravan nodes: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"gpu-a", "64 GiB", "48 GiB", "4.0 GiB", "0.50 of 2 (1 busy)", "gpu-b 1000 Mbit/s", "gpu-a 1000 Mbit/s", "32 GiB"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if err := runNodes([]string{"-join", ms[1].Addr()}, &out, &errb); err == nil || !strings.Contains(err.Error(), "-key-file") {
		t.Errorf("without a key: %v", err)
	}
}

func TestSchedulerGossipFlags(t *testing.T) {
	defer func() { schedulerGossip = gossipFlags{} }()
	var w bytes.Buffer
	if _, _, err := parseSchedulerFlags([]string{"-gossip-join", "10.0.0.1:7946", "-gossip-bind", "127.0.0.1:0"}, &w); err != nil {
		t.Fatal(err)
	}
	if schedulerGossip.join != "10.0.0.1:7946" {
		t.Fatalf("-gossip-join not parsed: %+v", schedulerGossip)
	}
	t.Setenv("CARAVAN_GOSSIP_KEY_FILE", "")
	if _, err := startSchedulerGossip(nil, nil); err == nil || !strings.Contains(err.Error(), "-key-file") {
		t.Fatalf("without a key file: %v", err)
	}
	schedulerGossip = gossipFlags{}
	t.Setenv("CARAVAN_GOSSIP_JOIN", "")
	stop, err := startSchedulerGossip(nil, nil)
	if err != nil {
		t.Fatalf("no gossip flags must mean no gossip: %v", err)
	}
	stop()
}
