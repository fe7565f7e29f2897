// Package gossip shares every node's memory, GPU use and measured links
// among Caravan's node agents over hashicorp/memberlist.
//
// Each member publishes a Record made of independently versioned sections
// (resources, coordinate, links, and any section a newer node adds). A
// section is a last-writer-wins register keyed by its version, so merging
// is idempotent and order-independent: push-pull exchanges carry every
// record, broadcasts carry only the sections that changed. Unknown
// sections are kept and relayed; unknown fields inside known sections are
// ignored, so new fields are additive.
//
// RTT between any two members comes from Vivaldi network coordinates
// (serf/coordinate) learnt on memberlist's pings; bandwidth comes from
// timed bulk transfers over an authenticated TCP endpoint (probe.go),
// limited to a configured share of each link.
package gossip
