package driver

import (
	"context"
	"net"
	"time"

	"github.com/caravan-dl/caravan/gossip"
	"github.com/caravan-dl/caravan/memshare"
)

// Donors from gossip: with a gossip block, a node that lends advertises
// its donor in the gossip record (memshare.GossipSection), and consumers
// pick from the static donor blocks plus every node gossip shows lending.

// gossipReader is the driver's live gossip view (empty while gossip is
// off or restarting).
type gossipReader struct{ g *gossipNode }

func (r gossipReader) View() gossip.View {
	r.g.mu.Lock()
	m := r.g.member
	r.g.mu.Unlock()
	if m == nil {
		return gossip.View{}
	}
	return m.View()
}

// donorView is the static donor blocks (this node's own donor included)
// plus the donors gossip shows. A node named in a static block, or
// serving at an address one does, keeps its static entry; this node's
// own gossip entry is skipped (its donor is already listed), so one
// machine never counts twice for placement. Name nodes the same in the
// memshare and gossip blocks (both default to the hostname).
type donorView struct {
	static *memshare.StaticDonors
	gossip *memshare.GossipDonors
	self   string // this node's gossip name
}

func (v donorView) Donors() []memshare.DonorInfo {
	out := v.static.Donors()
	for _, d := range v.gossip.Donors() {
		if d.Node != v.self && !hasNode(out, d.Node) && !hasAddr(out, d.NBDAddr) {
			out = append(out, d)
		}
	}
	return out
}

func hasAddr(ds []memshare.DonorInfo, addr string) bool {
	for _, d := range ds {
		if d.NBDAddr == addr {
			return true
		}
	}
	return false
}

// linkGossip makes consumers see gossip's donors, once per driver.
func (d *Driver) linkGossip() {
	d.mem.gossipOnce.Do(func() {
		src := memshare.NewGossipDonors(gossipReader{&d.gossip})
		src.Skipped = func(node string, err error) {
			d.logger.Debug("memshare: ignoring a gossip donor entry", "node", node, "error", err)
		}
		d.mem.mu.Lock()
		d.mem.gossipDonors = src
		d.mem.gossipSelf = func() string { return gossipReader{&d.gossip}.View().Self }
		d.mem.mu.Unlock()
		go d.advertiseLoop(d.ctx)
	})
}

// advertiseLoop publishes this node's donor addresses while it lends
// (unchanged entries cost no gossip traffic).
func (d *Driver) advertiseLoop(ctx context.Context) {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		d.advertiseDonor()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (d *Driver) advertiseDonor() {
	d.gossip.mu.Lock()
	m := d.gossip.member
	d.gossip.mu.Unlock()
	d.mem.mu.Lock()
	dn := d.mem.donor
	d.mem.mu.Unlock()
	if m == nil || dn == nil {
		return
	}
	info := dn.Info()
	info.Node = m.Name() // placement's distinct-node rule uses gossip names
	host, _, _ := net.SplitHostPort(m.Addr())
	info.NBDAddr = dialable(info.NBDAddr, host)
	info.APIAddr = dialable(info.APIAddr, host)
	if err := memshare.Advertise(m, info); err != nil {
		d.logger.Warn("memshare: advertising this donor over gossip", "error", err)
	}
}

// dialable replaces a wildcard listen host with the gossip address host.
func dialable(addr, host string) string {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(h); (h == "" || ip != nil && ip.IsUnspecified()) && host != "" {
		return net.JoinHostPort(host, p)
	}
	return addr
}
