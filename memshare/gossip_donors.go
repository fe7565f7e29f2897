package memshare

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"

	"github.com/caravan-dl/caravan/gossip"
)

// GossipSection is the gossip record section a donor node publishes its
// DonorInfo in; other members relay it untouched.
const GossipSection = "memshare"

// SectionPublisher is what Advertise needs from a gossip member
// (*gossip.Member is one).
type SectionPublisher interface {
	SetSection(name string, v any) error
}

// Advertise publishes d as this node's donor entry. d.Node must be the
// member's own name: GossipDonors drops an entry naming another node.
func Advertise(p SectionPublisher, d DonorInfo) error {
	if err := d.validate(); err != nil {
		return err
	}
	return p.SetSection(GossipSection, d)
}

// Withdraw publishes an empty entry: the node lends nothing any more.
func Withdraw(p SectionPublisher) error {
	return p.SetSection(GossipSection, DonorInfo{})
}

// GossipDonors is the DonorSource read from the gossip view: every alive
// member that advertises a valid donor entry. The view is read at each
// call, so a node that dies or withdraws drops out of new placements.
type GossipDonors struct {
	r gossip.Reader
	// Skipped, when set, hears about each entry left out and why
	// (malformed JSON, a missing address, a node claiming another's name).
	Skipped func(node string, err error)
}

// NewGossipDonors reads donors from r (a *gossip.Member).
func NewGossipDonors(r gossip.Reader) *GossipDonors { return &GossipDonors{r: r} }

// Donors implements DonorSource, in node-name order.
func (g *GossipDonors) Donors() []DonorInfo {
	var out []DonorInfo
	for _, n := range g.r.View().Nodes {
		raw, ok := n.Extra[GossipSection]
		if !ok {
			continue
		}
		d, err := parseAdvert(n.Name, raw)
		if err != nil {
			if g.Skipped != nil {
				g.Skipped(n.Name, err)
			}
			continue
		}
		if d.Node != "" {
			out = append(out, d)
		}
	}
	return out
}

// parseAdvert decodes and checks one node's entry; an empty entry (the
// node withdrew) decodes to a zero DonorInfo and no error.
func parseAdvert(node string, raw json.RawMessage) (DonorInfo, error) {
	var d DonorInfo
	if err := json.Unmarshal(raw, &d); err != nil {
		return DonorInfo{}, fmt.Errorf("memshare section: %w", err)
	}
	if d == (DonorInfo{}) {
		return d, nil
	}
	if d.Node != node {
		// Placement keeps a stripe's slabs on distinct nodes by this name;
		// a member may only speak for itself.
		return DonorInfo{}, fmt.Errorf("memshare section: node %q published by member %q", d.Node, node)
	}
	return d, d.validate()
}

func (d DonorInfo) validate() error {
	if d.Node == "" {
		return fmt.Errorf("donor: node is required")
	}
	for field, addr := range map[string]string{"nbd_addr": d.NBDAddr, "api_addr": d.APIAddr} {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return fmt.Errorf("donor %s: %s: %w", d.Node, field, err)
		}
		if p, err := strconv.Atoi(port); host == "" || err != nil || p <= 0 || p > 65535 {
			return fmt.Errorf("donor %s: %s %q needs a host and a port in 1..65535", d.Node, field, addr)
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			return fmt.Errorf("donor %s: %s %q is a listen address; advertise one peers can dial", d.Node, field, addr)
		}
	}
	return nil
}
