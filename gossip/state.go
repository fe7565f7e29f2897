package gossip

import (
	"encoding/json"
	"sort"
)

// Section names of the record; readers ignore names they do not know.
const (
	SectionResources = "res"
	SectionCoord     = "coord"
	SectionLinks     = "links"
)

// Resources is what a node has and uses.
type Resources struct {
	MemTotalBytes     uint64 `json:"mt"`
	MemUsedBytes      uint64 `json:"mu"`
	MemDonatableBytes uint64 `json:"md"` // reserved-but-unused by donor tasks, minus headroom
	GPUs              []GPU  `json:"g,omitempty"`
	// Role is "node" for a node agent, "observer" for a reader that
	// shares nothing (the scheduler).
	Role string `json:"r,omitempty"`
}

// GPU is one GPU's committed share, from the driver's ledger.
type GPU struct {
	Index        int     `json:"i"`
	UUID         string  `json:"u,omitempty"`
	TotalMiB     uint64  `json:"t"`
	UsedFraction float64 `json:"f"`
	UsedMiB      uint64  `json:"m"`
}

// Link is one measured path from the publishing node to Peer.
type Link struct {
	Peer string `json:"p"`
	// BandwidthBps is the EWMA of measured throughput, bytes per second.
	BandwidthBps float64 `json:"bw"`
	// RTTSeconds is the TCP connect time of the latest probe.
	RTTSeconds float64 `json:"rtt"`
	Samples    int     `json:"n"`
	// UnixMillis is when the latest probe finished.
	UnixMillis int64 `json:"at"`
}

// Coord is a Vivaldi coordinate (serf/coordinate.Coordinate's fields).
type Coord struct {
	Vec        []float64 `json:"v"`
	Error      float64   `json:"e"`
	Adjustment float64   `json:"a"`
	Height     float64   `json:"h"`
}

// Section is one versioned part of a record. Data stays raw so a section
// this node does not understand is relayed unchanged.
type Section struct {
	Version uint64          `json:"v"`
	Data    json.RawMessage `json:"d"`
}

// Record is everything one node publishes.
type Record struct {
	Node     string             `json:"n"`
	Sections map[string]Section `json:"s"`
}

// merge folds in into r section by section, newest version wins; it
// reports the names of sections that changed.
func (r *Record) merge(in Record) []string {
	var changed []string
	if r.Sections == nil {
		r.Sections = map[string]Section{}
	}
	for name, s := range in.Sections {
		if cur, ok := r.Sections[name]; ok && cur.Version >= s.Version {
			continue
		}
		r.Sections[name] = s
		changed = append(changed, name)
	}
	sort.Strings(changed)
	return changed
}

func (r Record) clone() Record {
	c := Record{Node: r.Node, Sections: make(map[string]Section, len(r.Sections))}
	for k, v := range r.Sections {
		c.Sections[k] = v
	}
	return c
}

// decodeSection unmarshals a known section; a malformed one yields false
// and the zero value, so one bad section never hides the others.
func decodeSection[T any](r Record, name string) (T, bool) {
	var v T
	s, ok := r.Sections[name]
	if !ok || len(s.Data) == 0 {
		return v, false
	}
	if err := json.Unmarshal(s.Data, &v); err != nil {
		var zero T
		return zero, false
	}
	return v, true
}
