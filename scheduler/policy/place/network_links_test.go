package place

import (
	"slices"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// Three one-GPU nodes on links of 50 Mbit/s, 200 Mbit/s and 1 Gbit/s (as
// the gossip netns test measures them): a 2-worker gang takes the fast
// pair, which node uplinks alone cannot tell apart.
func TestNetworkPrefersFastMeasuredPair(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 3, GPUsPerNode: 1})
	a, b, c := cl.Nodes[0].Name, cl.Nodes[1].Name, cl.Nodes[2].Name
	cl.Links = policy.NewLinks()
	cl.Links.Set(a, b, 0.05)
	cl.Links.Set(b, c, 0.2)
	cl.Links.Set(a, c, 1)
	got := nodesOf(placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), pt.Job("ddp", 2, 0)))
	slices.Sort(got)
	if want := []string{a, c}; !slices.Equal(got, want) {
		t.Fatalf("gang on %v, want the 1 Gbit/s pair %v", got, want)
	}
}

// stepAt is a link-aware profile: 1 s compute + 8 Gbit of all-reduce.
type stepAt struct{}

func (stepAt) StepTime(shape []int) float64 { return stepAt{}.StepTimeAt(shape, 10) }
func (stepAt) StepTimeAt(shape []int, gbps float64) float64 {
	if len(shape) < 2 {
		return 1
	}
	return 1 + 8/gbps
}

// With a profile, a gang spread over two racks' fast intra-rack links
// loses to one whose cross-rack uplink is oversubscribed only when the
// model says so: the set with the lowest modelled step wins.
func TestNetworkLinksUseStepModel(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 2, NodesPerRack: 2, GPUsPerNode: 2})
	cl.Links = policy.NewLinks()
	for i, x := range cl.Nodes {
		for _, y := range cl.Nodes[i+1:] {
			g := 2.5 // cross-rack, oversubscribed 4:1
			if x.Rack == y.Rack {
				g = 10
			}
			if x.Rack == "r1" && y.Rack == "r1" {
				g = 40
			}
			cl.Links.Set(x.Name, y.Name, g)
		}
	}
	j := pt.Job("ddp", 4, 0)
	j.Speed = stepAt{}
	got := nodesOf(placeOn(t, NewNetwork(NetworkConfig{}), policy.NewCapacity(&cl), j))
	if len(got) != 2 || got[0][:2] != "r1" || got[1][:2] != "r1" {
		t.Fatalf("gang on %v, want both nodes of the 40 Gbit/s rack r1", got)
	}
}
