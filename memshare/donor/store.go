package donor

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/caravan-dl/caravan/memshare"
)

// lease is one granted slab.
type lease struct {
	id       string
	consumer string
	granted  time.Time
	expires  time.Time
	state    string
	deadline time.Time // reclaiming: freed at this time regardless
	session  string    // memshare.SessionID(consumer)
	handle   uint64    // the slab's index in its consumer's session export

	mu    sync.RWMutex // guards data against free during I/O
	data  []byte
	freed bool
}

// Errors the lease API maps to HTTP statuses.
var (
	ErrNoCapacity = errors.New("no donatable memory left on this node")
	ErrNotFound   = errors.New("no such lease")
)

// store holds the leases and the accounting.
type store struct {
	cfg    Config
	signer *memshare.Signer
	m      *metrics

	mu        sync.Mutex
	leases    map[string]*lease
	handles   map[uint64]*lease // never reused: a stale handle finds nothing
	nextH     uint64
	used      int64
	accepting bool
}

func newStore(cfg Config, signer *memshare.Signer, m *metrics) *store {
	return &store{cfg: cfg, signer: signer, m: m, leases: map[string]*lease{}, handles: map[uint64]*lease{}, accepting: true}
}

// grant allocates one slab for consumer.
func (s *store) grant(consumer string, now time.Time) (memshare.Lease, error) {
	size := int64(s.cfg.SlabSize)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.accepting || s.used+size > s.cfg.Capacity() {
		s.m.refused.Inc()
		return memshare.Lease{}, ErrNoCapacity
	}
	if s.nextH >= maxHandle {
		return memshare.Lease{}, errors.New("this donor has granted all the session handles it can; restart it")
	}
	data, err := allocSlab(s.cfg.SlabSize)
	if err != nil {
		return memshare.Lease{}, fmt.Errorf("allocating a slab: %w", err)
	}
	s.nextH++
	l := &lease{
		id: newID(), consumer: consumer, granted: now, expires: now.Add(s.cfg.LeaseTTL), state: memshare.LeaseActive, data: data,
		session: memshare.SessionID(consumer), handle: s.nextH,
	}
	s.leases[l.id] = l
	s.handles[l.handle] = l
	s.used += size
	s.m.granted.Inc()
	s.gauges()
	return s.view(l), nil
}

// renew extends a live lease (a reclaiming one keeps its deadline).
func (s *store) renew(id string, now time.Time) (memshare.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leases[id]
	if !ok {
		return memshare.Lease{}, ErrNotFound
	}
	l.expires = now.Add(s.cfg.LeaseTTL)
	if l.state == memshare.LeaseReclaiming && l.expires.After(l.deadline) {
		l.expires = l.deadline
	}
	return s.view(l), nil
}

func (s *store) release(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leases[id]
	if !ok {
		return ErrNotFound
	}
	s.free(l)
	return nil
}

// byHandle finds the live lease at a session handle.
func (s *store) byHandle(h uint64) (*lease, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.handles[h]
	return l, ok
}

// lookup finds the live lease a verified token names.
func (s *store) lookup(id string) (*lease, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leases[id]
	return l, ok
}

// sweep frees expired leases and reclaims memory the donor needs back:
// first no new leases, then slabs marked reclaiming (consumers move them),
// then, past the grace, freed regardless.
func (s *store) sweep(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.leases {
		switch {
		case !now.Before(l.expires):
			s.m.expired.Inc()
			s.free(l)
		case l.state == memshare.LeaseReclaiming && !now.Before(l.deadline):
			s.cfg.Logger.Warn("freeing a reclaimed slab its consumer did not move", "lease", l.id, "consumer", l.consumer)
			s.m.forced.Inc()
			s.free(l)
		}
	}
	capacity := s.cfg.Capacity()
	s.accepting = s.used+int64(s.cfg.SlabSize) <= capacity
	s.markReclaiming(capacity, now)
	s.gauges()
}

// markReclaiming flags the newest active leases until what stays fits.
func (s *store) markReclaiming(capacity int64, now time.Time) {
	keep := s.used
	var active []*lease
	for _, l := range s.leases {
		if l.state == memshare.LeaseReclaiming {
			keep -= int64(s.cfg.SlabSize)
		} else {
			active = append(active, l)
		}
	}
	sort.Slice(active, func(i, j int) bool { return active[i].granted.After(active[j].granted) })
	for _, l := range active {
		if keep <= capacity {
			return
		}
		l.state, l.deadline = memshare.LeaseReclaiming, now.Add(s.cfg.ReclaimGrace)
		keep -= int64(s.cfg.SlabSize)
		s.m.reclaimed.Inc()
		s.cfg.Logger.Info("reclaiming a slab for the donor", "lease", l.id, "consumer", l.consumer)
	}
}

// free unmaps the slab; I/O in progress finishes first. Caller holds s.mu.
func (s *store) free(l *lease) {
	delete(s.leases, l.id)
	delete(s.handles, l.handle)
	s.used -= int64(s.cfg.SlabSize)
	l.mu.Lock()
	if !l.freed {
		freeSlab(l.data)
		l.data, l.freed = nil, true
	}
	l.mu.Unlock()
	s.gauges()
}

func (s *store) status() memshare.DonorStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cfg.Capacity()
	free := c - s.used
	if !s.accepting || free < 0 {
		free = 0
	}
	return memshare.DonorStatus{Node: s.cfg.Node, SlabSize: s.cfg.SlabSize, Capacity: c, Used: s.used, Free: free, Accepting: s.accepting && free >= int64(s.cfg.SlabSize)}
}

func (s *store) view(l *lease) memshare.Lease {
	return memshare.Lease{
		ID: l.id, Size: s.cfg.SlabSize, Expires: l.expires, State: l.state,
		Token:       s.signer.Sign(memshare.Token{LeaseID: l.id, Expires: l.expires}),
		Session:     s.signer.Sign(memshare.Token{LeaseID: l.session, Expires: l.expires, Session: true}),
		SessionBase: l.handle << sessionShift,
	}
}

func (s *store) gauges() {
	s.m.used.Set(float64(s.used))
	s.m.leases.Set(float64(len(s.leases)))
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
