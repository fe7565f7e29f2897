package donor

import (
	"errors"
	"fmt"
	"time"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/nbd"
)

// exports resolves NBD export names, which are lease tokens.
type exports struct {
	s *store
}

// Lookup accepts only a validly signed, unexpired token for a live lease.
func (e exports) Lookup(name string) (nbd.Export, error) {
	tok, err := e.s.signer.Verify(name, time.Now())
	if err != nil {
		e.s.m.badTokens.Inc()
		return nil, err
	}
	if tok.Session {
		return newSessionExport(e.s, tok.LeaseID), nil
	}
	l, ok := e.s.lookup(tok.LeaseID)
	if !ok {
		e.s.m.badTokens.Inc()
		return nil, fmt.Errorf("lease %s: %w", tok.LeaseID, ErrNotFound)
	}
	return &slabExport{l: l, size: e.s.cfg.SlabSize}, nil
}

// List shows nothing: export names are credentials.
func (exports) List() []string { return nil }

var errFreed = &nbd.Error{Errno: nbd.ESHUTDOWN, Msg: "the slab's lease has ended"}

// slabExport is one leased slab.
type slabExport struct {
	l    *lease
	size uint64
}

func (x *slabExport) Size() uint64 { return x.size }

func (x *slabExport) ReadAt(p []byte, off uint64) error {
	x.l.mu.RLock()
	defer x.l.mu.RUnlock()
	if x.l.freed {
		return errFreed
	}
	copy(p, x.l.data[off:])
	return nil
}

func (x *slabExport) WriteAt(p []byte, off uint64, _ bool) error {
	x.l.mu.RLock() // concurrent writes to disjoint ranges are fine
	defer x.l.mu.RUnlock()
	if x.l.freed {
		return errFreed
	}
	copy(x.l.data[off:], p)
	return nil
}

// Flush has nothing to do: a slab is memory, and durability comes from the
// consumer's parity across donors.
func (x *slabExport) Flush() error {
	x.l.mu.RLock()
	defer x.l.mu.RUnlock()
	if x.l.freed {
		return errFreed
	}
	return nil
}

func (x *slabExport) Trim(off uint64, n uint32) error {
	x.l.mu.RLock()
	defer x.l.mu.RUnlock()
	if x.l.freed {
		return errFreed
	}
	trimSlab(x.l.data, off, uint64(n))
	return nil
}

// IsTokenError tells whether err is a token refusal.
func IsTokenError(err error) bool {
	return errors.Is(err, memshare.ErrTokenExpired) || errors.Is(err, memshare.ErrTokenForged) || errors.Is(err, memshare.ErrTokenMalformed)
}
