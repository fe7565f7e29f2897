package driver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/driver/ledger"
	"github.com/caravan-dl/caravan/gossip"
)

func gossipKeyFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "gossip.keys")
	if err := os.WriteFile(p, []byte("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGossipConfigNamesBadFields(t *testing.T) {
	bad := &GossipConfig{Bind: "nope", ProbeInterval: "soon", ProbeBytes: "lots"}
	_, _, err := bad.memberConfig("", "")
	for _, want := range []string{"gossip.bind", "gossip.encryption_key_file: required", "gossip.probe_interval", "gossip.probe_bytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	loose := filepath.Join(t.TempDir(), "k")
	_ = os.WriteFile(loose, []byte("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"), 0o644)
	if _, _, err := (&GossipConfig{EncryptionKeyFile: loose}).memberConfig("", ""); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable key file: %v", err)
	}
}

// The driver's member publishes the ledger and node memory; an observer
// (what the scheduler runs) reads them.
func TestGossipPublishesLedgerAndMemory(t *testing.T) {
	keyFile := gossipKeyFile(t)
	conf := simConfig(t.TempDir(), 2)
	conf.Gossip = &GossipConfig{NodeName: "drv", Bind: "127.0.0.1:0", EncryptionKeyFile: keyFile,
		ProbePort: -1, PublishInterval: "100ms"}
	td := newTestDriver(t, conf)
	t.Cleanup(td.impl.gossip.shutdown)
	node, _, err := td.impl.gpus()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.ledger.Admit("task-1", ledger.Request{Fraction: 0.5}); err != nil {
		t.Fatal(err)
	}
	td.impl.changed.notify()

	keys, _ := gossip.LoadKeyFile(keyFile)
	oc := gossip.DefaultConfig("observer")
	oc.BindAddr, oc.BindPort, oc.Keys, oc.Observer = "127.0.0.1", 0, keys, true
	oc.Join = []string{td.impl.gossip.member.Addr()}
	obs, err := gossip.New(oc)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Shutdown()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, ok := obs.View().Node("drv")
		if ok && n.Resources.MemTotalBytes > 0 && len(n.Resources.GPUs) == 2 &&
			n.Resources.GPUs[0].UsedFraction+n.Resources.GPUs[1].UsedFraction == 0.5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("observer never saw the ledger: %+v", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
