package consumer

import (
	"context"
	"crypto/tls"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/nbd"
)

// shard is one leased slab and the connection to it: the donor's
// connection shared by every slab of the volume there (base is the slab's
// offset in the session export), or, with a donor that offers no session,
// the slab's own.
type shard struct {
	donor  memshare.DonorInfo
	api    *memshare.APIClient
	client *nbd.Client
	base   uint64
	shared *donorConn // nil: client is the slab's own
	pool   *connPool

	mu    sync.Mutex
	lease memshare.Lease
}

// readAsync and writeAsync send a request as a member of g: the pieces of
// one operation are awaited with one wake-up.
func (s *shard) readAsync(g *nbd.Group, p []byte, off uint64) *nbd.Pending {
	return s.client.ReadAtIn(g, p, s.base+off)
}

func (s *shard) writeAsync(g *nbd.Group, p []byte, off uint64) *nbd.Pending {
	return s.client.WriteAtIn(g, p, s.base+off)
}

func (s *shard) readAt(p []byte, off uint64) error  { return s.client.ReadAt(p, s.base+off) }
func (s *shard) writeAt(p []byte, off uint64) error { return s.client.WriteAt(p, s.base+off) }
func (s *shard) trim(off uint64, n uint32) error    { return s.client.Trim(s.base+off, n) }

func (s *shard) leaseID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lease.ID
}

// release gives the slab back, best effort, and closes the connection.
func (s *shard) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.api.Release(ctx, s.leaseID())
	if s.shared != nil {
		s.pool.put(s.donor.NBDAddr, s.shared)
		return
	}
	s.client.Close()
}

// errNoDonor means placement found no donor for a slab.
var errNoDonor = errors.New("no donor can take another slab")

// lease picks a donor outside exclude by power of two choices (the one of
// two random candidates with more free memory, as Infiniswap does), leases
// a slab there and connects to it.
func (v *Volume) leaseShard(ctx context.Context, exclude map[string]bool) (*shard, error) {
	var candidates []memshare.DonorInfo
	for _, d := range v.cfg.Donors.Donors() {
		if !exclude[d.Node] {
			candidates = append(candidates, d)
		}
	}
	lastErr := errNoDonor
	for len(candidates) > 0 {
		i := v.pickTwo(ctx, candidates)
		d := candidates[i]
		candidates = append(candidates[:i], candidates[i+1:]...)
		sh, err := v.connect(ctx, d)
		if err == nil {
			return sh, nil
		}
		lastErr = err
		v.cfg.Logger.Debug("donor refused a slab", "node", d.Node, "error", err)
	}
	return nil, lastErr
}

// pickTwo returns the index of the better of two random candidates.
func (v *Volume) pickTwo(ctx context.Context, cs []memshare.DonorInfo) int {
	if len(cs) == 1 {
		return 0
	}
	a := rand.IntN(len(cs))
	b := rand.IntN(len(cs) - 1)
	if b >= a {
		b++
	}
	if v.free(ctx, cs[b]) > v.free(ctx, cs[a]) {
		return b
	}
	return a
}

func (v *Volume) free(ctx context.Context, d memshare.DonorInfo) int64 {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := v.apiFor(d).Status(ctx)
	if err != nil || !st.Accepting {
		return -1
	}
	return st.Free
}

func (v *Volume) apiFor(d memshare.DonorInfo) *memshare.APIClient {
	v.apiMu.Lock()
	defer v.apiMu.Unlock()
	c, ok := v.apis[d.APIAddr]
	if !ok {
		c = memshare.NewAPIClient(d.APIAddr, v.cfg.Key, v.cfg.TLS)
		v.apis[d.APIAddr] = c
	}
	return c
}

// tlsFor names the donor host for certificate checks, as HTTPS does.
func tlsFor(cfg *tls.Config, addr string) *tls.Config {
	if cfg == nil || cfg.ServerName != "" {
		return cfg
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return cfg
	}
	c := cfg.Clone()
	c.ServerName = host
	return c
}

// connect leases one slab on d and opens its NBD export.
func (v *Volume) connect(ctx context.Context, d memshare.DonorInfo) (*shard, error) {
	api := v.apiFor(d)
	l, err := api.Grant(ctx, v.cfg.ID)
	if err != nil {
		return nil, err
	}
	if l.Size != v.cfg.SlabSize {
		_ = api.Release(ctx, l.ID)
		return nil, errors.New("donor slab size differs from slab_size")
	}
	dial := func(export string) (*nbd.Client, error) {
		return nbd.Dial(ctx, "tcp", d.NBDAddr, nbd.ClientOptions{Export: export, TLS: tlsFor(v.cfg.TLS, d.NBDAddr), Timeout: v.cfg.IOTimeout})
	}
	if l.Session != "" {
		dc, err := v.pool.get(d.NBDAddr, func() (*nbd.Client, error) { return dial(l.Session) })
		if err != nil {
			_ = api.Release(ctx, l.ID)
			return nil, err
		}
		return &shard{donor: d, api: api, client: dc.client, base: l.SessionBase, shared: dc, pool: &v.pool, lease: l}, nil
	}
	c, err := dial(l.Token)
	if err != nil {
		_ = api.Release(ctx, l.ID)
		return nil, err
	}
	return &shard{donor: d, api: api, client: c, lease: l}, nil
}
