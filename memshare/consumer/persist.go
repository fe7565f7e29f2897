package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/nbd"
)

// Persistence: a Volume's layout (which leased slab holds which slot of
// which stripe) can be saved and re-opened by another process, so a
// task's remote memory outlives the process serving it (the driver plugin
// restarting). The leases stay with their donors meanwhile; they must be
// re-opened before they expire unrenewed.

// LayoutVersion is the version of the saved Layout format.
const LayoutVersion = 1

// Layout is the saved form of a Volume.
type Layout struct {
	Version      int      `json:"version"`
	ID           string   `json:"id"`
	Size         uint64   `json:"size"`
	Mode         string   `json:"mode"`
	Layout       string   `json:"layout"`
	DataShards   int      `json:"data_shards"`
	ParityShards int      `json:"parity_shards"`
	SlabSize     uint64   `json:"slab_size"`
	Stripes      []Stripe `json:"stripes"`
}

// Stripe is the saved slots of one stripe, in slot order.
type Stripe struct {
	Slots []Slab `json:"slots"`
}

// Slab is one saved slot: its donor and lease. Dead means the slab missed
// writes (or failed) and must never be read again; it is rebuilt from the
// stripe's other slabs after re-opening.
type Slab struct {
	Donor memshare.DonorInfo `json:"donor"`
	Lease string             `json:"lease"`
	Token string             `json:"token,omitempty"`
	Dead  bool               `json:"dead,omitempty"`
	Lost  bool               `json:"lost,omitempty"`
}

// Snapshot is a Volume's layout at one moment, as saved.
type Snapshot struct {
	Layout Layout
	cur    [][]*shard // identity of each slot's slab
	down   [][]bool   // dead or lost
}

// Snapshot records the current layout.
func (v *Volume) Snapshot() *Snapshot {
	s := &Snapshot{Layout: Layout{
		Version: LayoutVersion, ID: v.cfg.ID, Size: v.cfg.Size, Mode: v.cfg.Mode, Layout: v.cfg.Layout,
		DataShards: v.k, ParityShards: v.n - v.k, SlabSize: v.cfg.SlabSize,
	}}
	for _, st := range v.stripes {
		var rec Stripe
		cur, down := make([]*shard, v.n), make([]bool, v.n)
		st.mu.Lock()
		for i, sl := range st.slots {
			cur[i], down[i] = sl.cur, sl.dead || sl.lost
			r := Slab{Dead: sl.dead, Lost: sl.lost}
			if sl.cur != nil {
				sl.cur.mu.Lock()
				r.Donor, r.Lease, r.Token = sl.cur.donor, sl.cur.lease.ID, sl.cur.lease.Token
				sl.cur.mu.Unlock()
			}
			rec.Slots = append(rec.Slots, r)
		}
		st.mu.Unlock()
		s.Layout.Stripes = append(s.Layout.Stripes, rec)
		s.cur, s.down = append(s.cur, cur), append(s.down, down)
	}
	return s
}

// Changed tells whether a slot of a stripe overlapping [off, off+n) holds
// another slab, or has failed, since s was taken. Called after a write and
// before its acknowledgement, it says whether the saved layout must be
// rewritten first: a slab that missed an acknowledged write must be saved
// as dead before anyone could re-open it as current.
func (v *Volume) Changed(s *Snapshot, off, n uint64) bool {
	if s == nil || len(s.cur) != len(v.stripes) {
		return true
	}
	stripeBytes := v.blocks * BlockSize
	if n == 0 {
		n = 1
	}
	last := min((off+n-1)/stripeBytes, uint64(len(v.stripes)-1))
	for si := off / stripeBytes; si <= last; si++ {
		st := v.stripes[si]
		st.mu.Lock()
		for i, sl := range st.slots {
			if sl.cur != s.cur[si][i] || (sl.dead || sl.lost) != s.down[si][i] {
				st.mu.Unlock()
				return true
			}
		}
		st.mu.Unlock()
	}
	return false
}

// Reopen takes over a saved Volume: every live slab's lease is renewed
// (fresh token) and reconnected; a slab whose lease cannot be renewed
// (expired, its donor gone) or that was saved dead is rebuilt from the
// stripe's other slabs on another donor, as a failed donor's slabs are. A
// stripe left with fewer than k slabs is lost: its I/O fails with EIO.
func Reopen(ctx context.Context, cfg Config, l Layout) (*Volume, error) {
	cfg = cfg.withDefaults()
	if err := checkLayout(cfg, l); err != nil {
		return nil, err
	}
	v, err := newVolume(cfg)
	if err != nil {
		return nil, err
	}
	v.ctx, v.cancel = context.WithCancel(context.Background())
	v.stripes = make([]*stripe, len(l.Stripes))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for si, rec := range l.Stripes {
		st := &stripe{idx: si, slots: make([]slot, v.n), extents: make([]sync.RWMutex, (v.rows+extentBlocks-1)/extentBlocks)}
		v.stripes[si] = st
		for i, sl := range rec.Slots {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				sh, err := v.resume(ctx, sl)
				st.slots[i] = slot{cur: sh, dead: err != nil, lost: sl.Lost}
				if err != nil && !sl.Dead {
					v.m.deadSlabs.Inc()
					v.cfg.Logger.Warn("saved slab did not survive; rebuilding it", "stripe", si, "slot", i, "node", sl.Donor.Node, "error", err)
				}
			}()
		}
	}
	wg.Wait()
	v.startStripes()
	v.wg.Add(2)
	go func() { defer v.wg.Done(); v.renewLoop() }()
	go func() { defer v.wg.Done(); v.rebuildLoop() }()
	return v, nil
}

// startStripes watches the live slabs, marks stripes with fewer than k of
// them lost, and queues the rebuild of the rest.
func (v *Volume) startStripes() {
	for _, st := range v.stripes {
		live, lost := 0, false
		for i, sl := range st.slots {
			lost = lost || sl.lost
			if !sl.dead && !sl.lost {
				live++
				v.watch(st, i, sl.cur)
			}
		}
		if lost || live < v.k {
			if !lost {
				v.markLost(st)
			}
			continue
		}
		for i, sl := range st.slots {
			if sl.dead {
				v.queue(st, i)
			}
		}
	}
}

// resume renews a saved slab's lease and reconnects to it. On failure it
// still returns a stand-in shard (closed connection) so the slot can be
// released once rebuilt.
func (v *Volume) resume(ctx context.Context, sl Slab) (*shard, error) {
	api := v.apiFor(sl.Donor)
	sh := &shard{donor: sl.Donor, api: api, lease: memshare.Lease{ID: sl.Lease, Token: sl.Token}}
	err := errors.New("saved as failed")
	if !sl.Dead && !sl.Lost {
		err = v.reconnect(ctx, sh)
	}
	if err != nil {
		// The stand-in holds no node: a donor that restarted empty (its
		// plugin restarted with the consumer's) may take the slab back.
		sh.donor.Node = ""
		sh.client = nbd.ClosedClient(err)
		return sh, err
	}
	return sh, nil
}

func (v *Volume) reconnect(ctx context.Context, sh *shard) error {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	l, err := sh.api.Renew(rctx, sh.lease.ID)
	if err != nil {
		return fmt.Errorf("renewing lease: %w", err)
	}
	if l.Size != v.cfg.SlabSize {
		return errors.New("donor slab size differs from slab_size")
	}
	sh.lease = l
	// The slab's own connection (its lease token), even where the donor
	// offers a shared session: a re-open is rare and this keeps it simple.
	c, err := nbd.Dial(rctx, "tcp", sh.donor.NBDAddr, nbd.ClientOptions{Export: l.Token, TLS: tlsFor(v.cfg.TLS, sh.donor.NBDAddr), Timeout: v.cfg.IOTimeout})
	if err != nil {
		return fmt.Errorf("reconnecting: %w", err)
	}
	sh.client = c
	return nil
}

// checkLayout refuses a layout that does not fit cfg.
func checkLayout(cfg Config, l Layout) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if l.Version != LayoutVersion {
		return fmt.Errorf("saved layout: version %d, this build reads %d", l.Version, LayoutVersion)
	}
	if cfg.Mode != ModeEC || l.Mode != ModeEC {
		return errors.New("saved layout: only erasure-coded volumes can be re-opened")
	}
	if l.ID != cfg.ID || l.Size != cfg.Size || l.Layout != cfg.Layout || l.DataShards != cfg.DataShards ||
		l.ParityShards != cfg.ParityShards || l.SlabSize != cfg.SlabSize {
		return fmt.Errorf("saved layout: id/size/layout/shards/slab_size %q/%d/%s/%d+%d/%d differ from the config's %q/%d/%s/%d+%d/%d",
			l.ID, l.Size, l.Layout, l.DataShards, l.ParityShards, l.SlabSize,
			cfg.ID, cfg.Size, cfg.Layout, cfg.DataShards, cfg.ParityShards, cfg.SlabSize)
	}
	k := cfg.DataShards
	stripeBytes := cfg.SlabSize / (BlockSize / uint64(k)) * BlockSize
	if cfg.Layout == LayoutWhole {
		stripeBytes = cfg.SlabSize * uint64(k)
	}
	if want := int((cfg.Size + stripeBytes - 1) / stripeBytes); len(l.Stripes) != want {
		return fmt.Errorf("saved layout: %d stripes, the size needs %d", len(l.Stripes), want)
	}
	for i, st := range l.Stripes {
		if len(st.Slots) != k+cfg.ParityShards {
			return fmt.Errorf("saved layout: stripe %d has %d slots, want %d", i, len(st.Slots), k+cfg.ParityShards)
		}
		for j, sl := range st.Slots {
			if !sl.Dead && !sl.Lost && (sl.Lease == "" || sl.Donor.NBDAddr == "" || sl.Donor.APIAddr == "") {
				return fmt.Errorf("saved layout: stripe %d slot %d: a live slab needs a lease and donor addresses", i, j)
			}
		}
	}
	return nil
}

// Abandon stops the Volume without giving its leases back: its process is
// going away while the task keeps the memory (the leases run on until
// their expiry unless another process re-opens the layout).
func (v *Volume) Abandon() {
	v.cancel()
	v.wg.Wait()
	for _, st := range v.stripes {
		st.mu.Lock()
		for _, s := range st.slots {
			for _, sh := range []*shard{s.cur, s.next} {
				if sh != nil && sh.client != nil {
					_ = sh.client.Close()
				}
			}
		}
		st.mu.Unlock()
	}
}
