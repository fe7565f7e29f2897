package memshare

import (
	"errors"
	"fmt"
	"sync"
)

// DonorInfo is how to reach one donor node.
type DonorInfo struct {
	// Node identifies the machine: two slabs of one stripe never share a Node.
	Node string `json:"node"`
	// NBDAddr serves slabs (host:port); APIAddr grants leases (host:port).
	NBDAddr string `json:"nbd_addr"`
	APIAddr string `json:"api_addr"`
}

// DonorSource is the view of donors a consumer picks from. The gossip
// layer will implement it; StaticDonors does until then.
type DonorSource interface {
	Donors() []DonorInfo
}

// StaticDonors is a fixed, replaceable donor list.
type StaticDonors struct {
	mu     sync.RWMutex
	donors []DonorInfo
}

// NewStaticDonors validates the list.
func NewStaticDonors(ds []DonorInfo) (*StaticDonors, error) {
	s := &StaticDonors{}
	return s, s.Set(ds)
}

// Set replaces the list.
func (s *StaticDonors) Set(ds []DonorInfo) error {
	var errs []error
	for i, d := range ds {
		if d.Node == "" || d.NBDAddr == "" || d.APIAddr == "" {
			errs = append(errs, fmt.Errorf("donors[%d]: node, nbd_addr and api_addr are required", i))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.mu.Lock()
	s.donors = append([]DonorInfo(nil), ds...)
	s.mu.Unlock()
	return nil
}

// Donors returns a copy of the list.
func (s *StaticDonors) Donors() []DonorInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]DonorInfo(nil), s.donors...)
}
