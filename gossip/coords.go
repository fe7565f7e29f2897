package gossip

import (
	"encoding/json"
	"math"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/coordinate"
)

// coords learns this member's Vivaldi coordinate from memberlist's pings,
// as Serf and Consul do: every ack carries the acker's coordinate and the
// pinger updates its own with the measured RTT.
type coords struct {
	client *coordinate.Client
	m      *Member
}

func newCoords(m *Member) (*coords, error) {
	c, err := coordinate.NewClient(coordinate.DefaultConfig())
	if err != nil {
		return nil, err
	}
	return &coords{client: c, m: m}, nil
}

// AckPayload implements memberlist.PingDelegate.
func (c *coords) AckPayload() []byte {
	b, _ := json.Marshal(toCoord(c.client.GetCoordinate()))
	return b
}

// NotifyPingComplete implements memberlist.PingDelegate.
func (c *coords) NotifyPingComplete(other *memberlist.Node, rtt time.Duration, payload []byte) {
	if len(payload) == 0 || len(payload) > 4096 {
		return
	}
	var in Coord
	if err := json.Unmarshal(payload, &in); err != nil {
		c.m.log.Debug("ignoring malformed coordinate in ping ack", "node", other.Name, "error", err)
		return
	}
	oc := in.toSerf()
	if oc == nil {
		return
	}
	if _, err := c.client.Update(other.Name, oc, rtt); err != nil {
		c.m.log.Debug("rejected coordinate update", "node", other.Name, "error", err)
	}
}

func (c *coords) forget(name string) { c.client.ForgetNode(name) }

func (c *coords) current() *coordinate.Coordinate { return c.client.GetCoordinate() }

func toCoord(c *coordinate.Coordinate) Coord {
	return Coord{Vec: c.Vec, Error: c.Error, Adjustment: c.Adjustment, Height: c.Height}
}

// toSerf converts and validates; nil for anything not a finite coordinate
// of the default dimensionality.
func (c Coord) toSerf() *coordinate.Coordinate {
	def := coordinate.DefaultConfig()
	if len(c.Vec) != int(def.Dimensionality) {
		return nil
	}
	out := &coordinate.Coordinate{Vec: append([]float64(nil), c.Vec...), Error: c.Error, Adjustment: c.Adjustment, Height: c.Height}
	if !out.IsValid() || math.Abs(c.Height) > 1e3 || math.Abs(c.Adjustment) > 1e3 {
		return nil
	}
	return out
}
