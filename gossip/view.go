package gossip

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/hashicorp/serf/coordinate"
)

// Reader is the read-only API consumers (the scheduler, memshare,
// `caravan nodes`) use; a Member is one.
type Reader interface {
	View() View
}

// NodeView is what the cluster knows about one node.
type NodeView struct {
	Name      string
	Resources Resources
	HasRes    bool
	Coord     *coordinate.Coordinate `json:"-"`
	Links     []Link                 // measured by this node, to peers
	// Extra holds sections this version does not interpret.
	Extra map[string]json.RawMessage `json:",omitempty"`
}

// MemFreeBytes is total minus used.
func (n NodeView) MemFreeBytes() uint64 {
	if n.Resources.MemUsedBytes > n.Resources.MemTotalBytes {
		return 0
	}
	return n.Resources.MemTotalBytes - n.Resources.MemUsedBytes
}

// View is a consistent snapshot of the alive members that publish.
type View struct {
	Self  string
	Nodes []NodeView // by name
	index map[string]int
}

// View returns a snapshot of the alive members that publish a record.
func (m *Member) View() View {
	return buildView(m.cfg.Name, m.store.live())
}

func buildView(self string, recs []Record) View {
	v := View{Self: self, index: map[string]int{}}
	for _, r := range recs {
		n := NodeView{Name: r.Node}
		n.Resources, n.HasRes = decodeSection[Resources](r, SectionResources)
		if c, ok := decodeSection[Coord](r, SectionCoord); ok {
			n.Coord = c.toSerf()
		}
		n.Links, _ = decodeSection[[]Link](r, SectionLinks)
		for name, s := range r.Sections {
			switch name {
			case SectionResources, SectionCoord, SectionLinks:
			default:
				if n.Extra == nil {
					n.Extra = map[string]json.RawMessage{}
				}
				n.Extra[name] = s.Data
			}
		}
		if !n.HasRes && n.Coord == nil && len(n.Links) == 0 && n.Extra == nil {
			continue
		}
		v.Nodes = append(v.Nodes, n)
	}
	sort.Slice(v.Nodes, func(i, j int) bool { return v.Nodes[i].Name < v.Nodes[j].Name })
	for i, n := range v.Nodes {
		v.index[n.Name] = i
	}
	return v
}

// Node returns one node's view.
func (v View) Node(name string) (NodeView, bool) {
	i, ok := v.index[name]
	if !ok {
		return NodeView{}, false
	}
	return v.Nodes[i], true
}

// RTT estimates the round trip between two members from their
// coordinates.
func (v View) RTT(a, b string) (time.Duration, bool) {
	na, ok1 := v.Node(a)
	nb, ok2 := v.Node(b)
	if !ok1 || !ok2 || na.Coord == nil || nb.Coord == nil || !na.Coord.IsCompatibleWith(nb.Coord) {
		return 0, false
	}
	return na.Coord.DistanceTo(nb.Coord), true
}

// Bandwidth is the measured bandwidth between two members in bytes per
// second: the fresher of a→b and b→a.
func (v View) Bandwidth(a, b string) (float64, bool) {
	var best Link
	for _, pair := range [][2]string{{a, b}, {b, a}} {
		n, ok := v.Node(pair[0])
		if !ok {
			continue
		}
		for _, l := range n.Links {
			if l.Peer == pair[1] && l.UnixMillis > best.UnixMillis {
				best = l
			}
		}
	}
	return best.BandwidthBps, best.Samples > 0
}

// LinkStat is one measured pair.
type LinkStat struct {
	A, B         string
	BandwidthBps float64
}

// NodeLinks returns the measured links touching node, slowest first,
// limited to members in the view.
func (v View) NodeLinks(node string) []LinkStat {
	var out []LinkStat
	for _, n := range v.Nodes {
		if n.Name == node {
			continue
		}
		if bw, ok := v.Bandwidth(node, n.Name); ok {
			out = append(out, LinkStat{A: node, B: n.Name, BandwidthBps: bw})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].BandwidthBps < out[j].BandwidthBps })
	return out
}

// NewView builds a View from node views (tests, and readers that receive
// a view as JSON, like `caravan nodes -json`).
func NewView(self string, nodes []NodeView) View {
	v := View{Self: self, Nodes: append([]NodeView(nil), nodes...), index: map[string]int{}}
	sort.Slice(v.Nodes, func(i, j int) bool { return v.Nodes[i].Name < v.Nodes[j].Name })
	for i, n := range v.Nodes {
		v.index[n.Name] = i
	}
	return v
}
