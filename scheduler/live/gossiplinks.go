package live

import (
	"sync"

	"github.com/caravan-dl/caravan/gossip"
	"github.com/caravan-dl/caravan/scheduler/policy"
)

// linkSources holds each scheduler's gossip reader. It lives beside the
// Scheduler rather than in it so this hook stays additive while the
// scheduler's own files change; SetLinkSource is the whole API.
var linkSources sync.Map // *Scheduler → gossip.Reader

// SetLinkSource makes placement use the links measured by gossip: the
// scheduler joins the gossip cluster as an observer (a member that shares
// nothing) and passes it here. nil turns it off.
func (s *Scheduler) SetLinkSource(r gossip.Reader) {
	if r == nil {
		linkSources.Delete(s)
		return
	}
	linkSources.Store(s, r)
}

// measuredLinks maps the gossip view's measured pairs onto the policy's
// node IDs (gossip members are named by Nomad node name); nil when there
// is no source or nothing measured, which leaves placement as before.
func (s *Scheduler) measuredLinks(l *gpuBook, ids []string) *policy.Links {
	v, ok := linkSources.Load(s)
	if !ok {
		return nil
	}
	return linksFromView(v.(gossip.Reader).View(), l, ids)
}

func linksFromView(view gossip.View, l *gpuBook, ids []string) *policy.Links {
	byName := make(map[string]string, len(ids))
	for _, id := range ids {
		if n := l.nodes[id]; n != nil {
			byName[n.Name] = id
		}
	}
	links := policy.NewLinks()
	for _, n := range view.Nodes {
		a, ok := byName[n.Name]
		if !ok {
			continue
		}
		for _, ln := range view.NodeLinks(n.Name) {
			if b, ok := byName[ln.B]; ok {
				links.Set(a, b, ln.BandwidthBps*8/1e9)
			}
		}
	}
	if links.Len() == 0 {
		return nil
	}
	return links
}
