package driver

import (
	"encoding/json"
	"testing"

	"github.com/caravan-dl/caravan/gossip"
	"github.com/caravan-dl/caravan/memshare"
)

type fixedView struct{ v gossip.View }

func (f fixedView) View() gossip.View { return f.v }

func advert(t *testing.T, d memshare.DonorInfo) map[string]json.RawMessage {
	t.Helper()
	return map[string]json.RawMessage{memshare.GossipSection: json.RawMessage(`{"node":"` + d.Node + `","nbd_addr":"` + d.NBDAddr + `","api_addr":"` + d.APIAddr + `"}`)}
}

// TestMemshareDonorViewMergesGossip: static blocks first; gossip adds
// the other lending nodes, never this node again, never a static node or
// address twice.
func TestMemshareDonorViewMergesGossip(t *testing.T) {
	static, err := memshare.NewStaticDonors([]memshare.DonorInfo{
		{Node: "self", NBDAddr: "[::]:10809", APIAddr: "[::]:10810"},
		{Node: "b", NBDAddr: "10.0.0.2:10809", APIAddr: "10.0.0.2:10810"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []gossip.NodeView
	for _, d := range []memshare.DonorInfo{
		{Node: "self", NBDAddr: "10.0.0.1:10809", APIAddr: "10.0.0.1:10810"},
		{Node: "b", NBDAddr: "10.0.0.9:10809", APIAddr: "10.0.0.9:10810"},
		{Node: "b2", NBDAddr: "10.0.0.2:10809", APIAddr: "10.0.0.2:10810"},
		{Node: "c", NBDAddr: "10.0.0.3:10809", APIAddr: "10.0.0.3:10810"},
	} {
		n := gossip.NodeView{Name: d.Node, Extra: map[string]json.RawMessage{}}
		for k, v := range advert(t, d) {
			n.Extra[k] = v
		}
		nodes = append(nodes, n)
	}
	v := donorView{static: static, gossip: memshare.NewGossipDonors(fixedView{gossip.NewView("self", nodes)}), self: "self"}
	got := v.Donors()
	var names []string
	for _, d := range got {
		names = append(names, d.Node)
	}
	if len(got) != 3 || names[0] != "self" || names[1] != "b" || names[2] != "c" || got[1].NBDAddr != "10.0.0.2:10809" {
		t.Fatalf("merged donors = %+v", got)
	}
}

func TestMemshareDialableAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:10809":  "10.0.0.1:10809",
		"[::]:10809":     "10.0.0.1:10809",
		":10809":         "10.0.0.1:10809",
		"10.0.0.7:10809": "10.0.0.7:10809",
	} {
		if got := dialable(in, "10.0.0.1"); got != want {
			t.Errorf("dialable(%q) = %q, want %q", in, got, want)
		}
	}
}
