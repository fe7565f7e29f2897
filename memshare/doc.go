// Package memshare lends idle memory of donor tasks to consumer tasks on
// other machines. Donors serve leased fixed-size slabs over NBD
// (memshare/donor); a consumer's local endpoint stripes its address space
// over several donors with Reed-Solomon parity (memshare/consumer). This
// package holds what both sides share: lease tokens, the lease API's wire
// types and client, and the donor view (a static list until gossip plugs in).
package memshare
