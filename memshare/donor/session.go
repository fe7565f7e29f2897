package donor

import (
	"fmt"
	"sync"

	"github.com/caravan-dl/caravan/memshare/nbd"
)

// A session export is one consumer's view of every slab it leases here:
// the slab with handle h sits at offsets [h<<sessionShift, +SlabSize). A
// consumer reaches all its slabs on this donor over one connection, so
// requests for different slabs share sends (one per batch, not one per
// slab). Handles are never reused, so a stale one reaches no other slab.
const (
	sessionShift = 32 // slabs are at most 4 GiB (Config.validate)
	maxHandle    = 1<<(63-sessionShift) - 1
)

type sessionExport struct {
	s       *store
	session string // memshare.SessionID of the consumer the token names

	mu    sync.Mutex
	cache map[uint64]*lease // leases this connection has reached
}

func newSessionExport(s *store, session string) *sessionExport {
	return &sessionExport{s: s, session: session, cache: map[uint64]*lease{}}
}

func (x *sessionExport) Size() uint64 { return (maxHandle + 1) << sessionShift }

// slab resolves [off, off+n) to one slab of this session and the offset
// in it; a range crossing a slab's end, or a handle that is not this
// consumer's live lease, is refused.
func (x *sessionExport) slab(off, n uint64) (*lease, uint64, error) {
	h, in := off>>sessionShift, off&(1<<sessionShift-1)
	if in+n > x.s.cfg.SlabSize {
		return nil, 0, &nbd.Error{Errno: nbd.EINVAL, Msg: fmt.Sprintf("request at %d+%d crosses the end of slab %d", in, n, h)}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	l, ok := x.cache[h]
	if !ok {
		if l, ok = x.s.byHandle(h); !ok || l.session != x.session {
			return nil, 0, errFreed
		}
		x.cache[h] = l
	}
	return l, in, nil
}

// forget drops a freed lease from the cache.
func (x *sessionExport) forget(off uint64) {
	x.mu.Lock()
	delete(x.cache, off>>sessionShift)
	x.mu.Unlock()
}

func (x *sessionExport) ReadAt(p []byte, off uint64) error {
	return x.do(off, uint64(len(p)), func(l *lease, in uint64) { copy(p, l.data[in:]) })
}

func (x *sessionExport) WriteAt(p []byte, off uint64, _ bool) error {
	return x.do(off, uint64(len(p)), func(l *lease, in uint64) { copy(l.data[in:], p) })
}

func (x *sessionExport) Trim(off uint64, n uint32) error {
	return x.do(off, uint64(n), func(l *lease, in uint64) { trimSlab(l.data, in, uint64(n)) })
}

// Flush has nothing to do (see slabExport.Flush).
func (x *sessionExport) Flush() error { return nil }

// do runs fn on the slab under its read lock (concurrent I/O to disjoint
// ranges is fine; free waits for it).
func (x *sessionExport) do(off, n uint64, fn func(l *lease, in uint64)) error {
	l, in, err := x.slab(off, n)
	if err != nil {
		return err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.freed {
		x.forget(off)
		return errFreed
	}
	fn(l, in)
	return nil
}
