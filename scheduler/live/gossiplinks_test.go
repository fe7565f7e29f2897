package live

import (
	"testing"

	"github.com/caravan-dl/caravan/gossip"
)

func TestLinksFromGossipViewUseNodeIDs(t *testing.T) {
	l := &gpuBook{nodes: map[string]*nodeInfo{
		"id-a": {ID: "id-a", Name: "client-a"},
		"id-b": {ID: "id-b", Name: "client-b"},
	}}
	v := gossip.NewView("sched", []gossip.NodeView{
		{Name: "client-a", Links: []gossip.Link{{Peer: "client-b", BandwidthBps: 125e6, Samples: 2, UnixMillis: 5}}},
		{Name: "client-b"},
		{Name: "not-in-nomad", Links: []gossip.Link{{Peer: "client-a", BandwidthBps: 1, Samples: 1, UnixMillis: 9}}},
	})
	links := linksFromView(v, l, []string{"id-a", "id-b"})
	if g, ok := links.Gbps("id-b", "id-a"); !ok || g != 1 {
		t.Fatalf("id-a↔id-b = %g (%v), want 1 Gbit/s", g, ok)
	}
	if links.Len() != 1 {
		t.Fatalf("%d links, want 1 (members outside Nomad ignored)", links.Len())
	}
	if linksFromView(gossip.NewView("s", nil), l, []string{"id-a"}) != nil {
		t.Fatal("an empty view must leave placement as before (nil links)")
	}
}
