package gossip

import (
	"encoding/json"
	"time"

	"github.com/hashicorp/memberlist"
)

// nodeMeta rides in memberlist's node metadata (≤ 512 bytes).
type nodeMeta struct {
	ProbePort int  `json:"pp,omitempty"`
	Observer  bool `json:"o,omitempty"`
}

// delegate implements memberlist.Delegate and EventDelegate for a Member.
type delegate struct{ m *Member }

func (d delegate) NodeMeta(limit int) []byte {
	b, _ := json.Marshal(nodeMeta{ProbePort: d.m.probePort(), Observer: d.m.cfg.Observer})
	if len(b) > limit {
		return nil
	}
	return b
}

// NotifyMsg receives broadcasts (and raw user messages); bad ones are
// dropped with a log line.
func (d delegate) NotifyMsg(buf []byte) {
	d.m.receive(buf, false)
}

func (d delegate) GetBroadcasts(overhead, limit int) [][]byte {
	msgs := d.m.queue.GetBroadcasts(overhead, limit)
	for _, b := range msgs {
		d.m.metrics.bytesOut.Add(float64(len(b)))
	}
	return msgs
}

// LocalState is the push-pull payload: every record this member knows.
func (d delegate) LocalState(join bool) []byte {
	b, err := encode(kindFull, d.m.store.all())
	if err != nil {
		d.m.log.Error("encoding local state", "error", err)
		return nil
	}
	d.m.metrics.bytesOut.Add(float64(len(b)))
	return b
}

func (d delegate) MergeRemoteState(buf []byte, join bool) {
	d.m.receive(buf, true)
}

func (d delegate) NotifyJoin(n *memberlist.Node) {
	d.m.store.setAlive(n.Name)
	d.m.metrics.members.Set(float64(d.m.numMembers()))
}

func (d delegate) NotifyLeave(n *memberlist.Node) {
	d.m.log.Info("member left or died; its record leaves the view", "node", n.Name)
	d.m.store.setDead(n.Name)
	d.m.coords.forget(n.Name)
	d.m.metrics.members.Set(float64(d.m.numMembers()))
}

func (d delegate) NotifyUpdate(*memberlist.Node) {}

// receive decodes, validates and merges one message; a push-pull is not
// relayed, a broadcast's new sections are (epidemic dissemination).
func (m *Member) receive(buf []byte, full bool) {
	start := time.Now()
	m.metrics.bytesIn.Add(float64(len(buf)))
	env, err := decode(buf, m.cfg.MaxMessageBytes)
	if err != nil {
		m.metrics.dropped.WithLabelValues(dropReason(buf, m.cfg.MaxMessageBytes)).Inc()
		m.log.Warn("dropping gossip message", "bytes", len(buf), "push_pull", full, "error", err)
		return
	}
	m.metrics.msgsIn.WithLabelValues(env.Kind).Inc()
	for _, r := range env.Records {
		if r.Node == m.cfg.Name {
			continue // only this member writes its own record
		}
		delta := m.store.merge(r)
		if delta != nil && !full {
			m.broadcast(*delta)
		}
		if delta != nil && m.onChange != nil {
			m.onChange(r.Node)
		}
	}
	m.metrics.mergeLatency.Observe(time.Since(start).Seconds())
}

func dropReason(buf []byte, limit int) string {
	switch {
	case len(buf) > limit:
		return "oversized"
	case len(buf) == 0:
		return "empty"
	default:
		return "malformed"
	}
}

// sectionBroadcast carries one section of one record; a newer version of
// the same section supersedes it in the queue.
type sectionBroadcast struct {
	node, section string
	version       uint64
	msg           []byte
}

func (b *sectionBroadcast) Invalidates(other memberlist.Broadcast) bool {
	o, ok := other.(*sectionBroadcast)
	return ok && o.node == b.node && o.section == b.section && o.version <= b.version
}
func (b *sectionBroadcast) Message() []byte { return b.msg }
func (b *sectionBroadcast) Finished()       {}

// broadcast queues each section of r as its own small message, so one
// large section never holds back the others; a section too large for a
// packet travels by push-pull only.
func (m *Member) broadcast(r Record) {
	for name, s := range r.Sections {
		msg, err := encode(kindUpdate, []Record{{Node: r.Node, Sections: map[string]Section{name: s}}})
		if err != nil {
			continue
		}
		if len(msg) > m.maxBroadcast {
			m.log.Debug("section too large to broadcast; push-pull carries it", "node", r.Node, "section", name, "bytes", len(msg))
			continue
		}
		m.queue.QueueBroadcast(&sectionBroadcast{node: r.Node, section: name, version: s.Version, msg: msg})
	}
}
