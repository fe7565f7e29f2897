package gossip

import (
	"encoding/json"
	"sort"
)

// Donor is a node with memory to lend, as the view knows it: how much
// (the res section, broadcast when it moves by MemBroadcastDelta or
// appears/vanishes) and, when the node's memshare donor advertises
// itself, that entry verbatim (the "memshare" section, owned and parsed
// by memshare.GossipDonors: gossip does not interpret it).
type Donor struct {
	Node           string
	DonatableBytes uint64
	MemFreeBytes   uint64
	// Advert is the node's memshare section, nil when it has none.
	Advert json.RawMessage
}

// DonorSection is the section memshare donors publish (memshare's
// GossipSection); kept here only so Donors can return it.
const DonorSection = "memshare"

// Donors lists the alive nodes that publish donatable memory, most
// donatable first (ties by name), so memshare can prefer roomy donors;
// join with memshare.GossipDonors by Node for the endpoints.
func (v View) Donors() []Donor {
	var out []Donor
	for _, n := range v.Nodes {
		if !n.HasRes || n.Resources.MemDonatableBytes == 0 {
			continue
		}
		out = append(out, Donor{Node: n.Name, DonatableBytes: n.Resources.MemDonatableBytes, MemFreeBytes: n.MemFreeBytes(), Advert: n.Extra[DonorSection]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].DonatableBytes > out[j].DonatableBytes })
	return out
}
