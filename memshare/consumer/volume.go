package consumer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/nbd"
	"github.com/klauspost/reedsolomon"
)

// extentBlocks is how many blocks one extent lock covers.
const extentBlocks = 64

// ErrLost is returned for I/O on a stripe that lost more than r slabs: the
// data is gone and is never guessed.
var ErrLost = &nbd.Error{Errno: nbd.EIO, Msg: "remote memory lost: more slabs of this stripe failed than parity can rebuild"}

// Volume is the striped, erasure-coded address space. It implements
// nbd.Export.
type Volume struct {
	cfg     Config
	k, n    int    // data shards, total shards
	piece   uint64 // bytes of one row in one slab (4096/k split, 4096 whole)
	rows    uint64 // rows per slab: RS codes each row across the k+r slabs
	blocks  uint64 // 4 KiB blocks per stripe
	whole   bool   // LayoutWhole
	enc     reedsolomon.Encoder
	backup  *backupFile
	stripes []*stripe
	m       *metrics

	apiMu sync.Mutex
	apis  map[string]*memshare.APIClient
	pool  connPool // one NBD connection per donor

	rebuildQ chan job
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// stripe is k+r slots; slot i holds piece i of every block of the stripe.
type stripe struct {
	idx     int
	mu      sync.Mutex // guards slots
	slots   []slot
	extents []sync.RWMutex
}

// slot is one position of a stripe. cur is read only while !dead; next is
// a replacement being filled by a rebuild (written, never read).
type slot struct {
	cur, next *shard
	dead      bool
	queued    bool
	lost      bool
	failures  int // consecutive failed rebuilds, for backoff
}

// Open leases every slab and starts the renewer and the rebuilder.
func Open(ctx context.Context, cfg Config) (*Volume, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	v, err := newVolume(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Mode == ModeBackup {
		b, err := openBackup(cfg.BackupPath, cfg.Size)
		if err != nil {
			return nil, err
		}
		v.backup = b
	}
	v.ctx, v.cancel = context.WithCancel(context.Background())
	if err := v.place(ctx); err != nil {
		v.Close()
		return nil, err
	}
	v.wg.Add(2)
	go func() { defer v.wg.Done(); v.renewLoop() }()
	go func() { defer v.wg.Done(); v.rebuildLoop() }()
	return v, nil
}

// newVolume is the set-up Open and Reopen share: geometry and codec,
// no slabs yet.
func newVolume(cfg Config) (*Volume, error) {
	k, r := cfg.DataShards, cfg.ParityShards
	v := &Volume{
		cfg: cfg, k: k, n: k + r, piece: BlockSize / uint64(k),
		apis: map[string]*memshare.APIClient{}, rebuildQ: make(chan job, 1024),
		m: newMetrics(cfg.Registry),
	}
	v.rows = cfg.SlabSize / v.piece
	v.blocks = v.rows
	if cfg.Layout == LayoutWhole && r > 0 {
		v.whole, v.piece = true, BlockSize
		v.rows = cfg.SlabSize / BlockSize
		v.blocks = v.rows * uint64(k)
	}
	if r > 0 {
		enc, err := reedsolomon.New(k, r)
		if err != nil {
			return nil, err
		}
		v.enc = enc
	}
	return v, nil
}

// place leases k+r slabs per stripe on distinct nodes.
func (v *Volume) place(ctx context.Context) error {
	stripeBytes := v.blocks * BlockSize
	count := int((v.cfg.Size + stripeBytes - 1) / stripeBytes)
	if nodes := distinctNodes(v.cfg.Donors.Donors()); nodes < v.n {
		return fmt.Errorf("need %d donors on distinct nodes for k=%d + r=%d, the donor view has %d", v.n, v.k, v.n-v.k, nodes)
	}
	for i := range count {
		st := &stripe{idx: i, slots: make([]slot, v.n), extents: make([]sync.RWMutex, (v.rows+extentBlocks-1)/extentBlocks)}
		used := map[string]bool{}
		for j := range v.n {
			sh, err := v.leaseShard(ctx, used)
			if err != nil {
				v.stripes = append(v.stripes, st)
				return fmt.Errorf("stripe %d slab %d: %w", i, j, err)
			}
			used[sh.donor.Node] = true
			st.slots[j].cur = sh
			v.watch(st, j, sh)
		}
		v.stripes = append(v.stripes, st)
	}
	return nil
}

func distinctNodes(ds []memshare.DonorInfo) int {
	seen := map[string]bool{}
	for _, d := range ds {
		seen[d.Node] = true
	}
	return len(seen)
}

// Size implements nbd.Export.
func (v *Volume) Size() uint64 { return v.cfg.Size }

// Flush implements nbd.Export: acknowledged writes are already on k or
// more donors; the backup file is synced.
func (v *Volume) Flush() error {
	if v.backup != nil {
		return v.backup.sync()
	}
	return nil
}

// ReadAt implements nbd.Export.
func (v *Volume) ReadAt(p []byte, off uint64) error {
	return v.each(p, off, func(st *stripe, b0, b1 uint64, head, tail uint64, part []byte) error {
		segs := v.segments(b0, b1)
		unlock := st.lockSegs(segs, false)
		defer unlock()
		buf := part
		if head != 0 || tail != 0 {
			buf = make([]byte, (b1-b0)*BlockSize)
		}
		if err := v.readSegs(st, segs, buf); err != nil {
			return err
		}
		if &buf[0] != &part[0] {
			copy(part, buf[head:])
		}
		return nil
	})
}

// WriteAt implements nbd.Export. It returns once every touched row is
// decodable from the slabs that took the write: at least k of them, and a
// slab that missed it is never read again.
func (v *Volume) WriteAt(p []byte, off uint64, _ bool) error {
	return v.each(p, off, func(st *stripe, b0, b1 uint64, head, tail uint64, part []byte) error {
		segs := v.segments(b0, b1)
		unlock := st.lockSegs(segs, true)
		defer unlock()
		buf := part
		if head != 0 || tail != 0 {
			buf = make([]byte, (b1-b0)*BlockSize)
			if err := v.readSegs(st, segs, buf); err != nil {
				return err
			}
			copy(buf[head:], part)
		}
		return v.writeSegs(st, segs, buf)
	})
}

// seg is the part of a stripe's block range in one row range: all slots
// (split layout, slot -1) or one slot (whole layout). boff is its offset in
// the range's buffer.
type seg struct {
	slot   int
	r0, r1 uint64
	boff   uint64
}

// segments maps stripe blocks [b0, b1) to rows.
func (v *Volume) segments(b0, b1 uint64) []seg {
	if !v.whole {
		return []seg{{slot: -1, r0: b0, r1: b1}}
	}
	var out []seg
	for b := b0; b < b1; {
		s := b / v.rows
		end := min(b1, (s+1)*v.rows)
		out = append(out, seg{slot: int(s), r0: b - s*v.rows, r1: end - s*v.rows, boff: (b - b0) * BlockSize})
		b = end
	}
	return out
}

// readSegs reads the segments into their parts of buf.
func (v *Volume) readSegs(st *stripe, segs []seg, buf []byte) error {
	return v.eachSeg(st, segs, buf, v.readWhole, v.readBlocks)
}

// writeSegs writes the segments from their parts of buf.
func (v *Volume) writeSegs(st *stripe, segs []seg, buf []byte) error {
	return v.eachSeg(st, segs, buf, v.writeWhole, v.writeBlocks)
}

// eachSeg runs whole (whole layout) or split (split layout) on each
// segment with its part of buf, stopping at the first error.
func (v *Volume) eachSeg(st *stripe, segs []seg, buf []byte,
	whole func(st *stripe, slot int, r0, r1 uint64, b []byte) error,
	split func(st *stripe, r0, r1 uint64, b []byte) error) error {
	for _, sg := range segs {
		b := buf[sg.boff : sg.boff+(sg.r1-sg.r0)*BlockSize]
		var err error
		if v.whole {
			err = whole(st, sg.slot, sg.r0, sg.r1, b)
		} else {
			err = split(st, sg.r0, sg.r1, b)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// lockSegs takes the row-extent locks of every segment, in order.
func (st *stripe) lockSegs(segs []seg, write bool) func() {
	var es []uint64
	for _, sg := range segs {
		for e := sg.r0 / extentBlocks; e <= (sg.r1-1)/extentBlocks; e++ {
			es = append(es, e)
		}
	}
	slices.Sort(es)
	es = slices.Compact(es)
	for _, e := range es {
		if write {
			st.extents[e].Lock()
		} else {
			st.extents[e].RLock()
		}
	}
	return func() {
		for _, e := range es {
			if write {
				st.extents[e].Unlock()
			} else {
				st.extents[e].RUnlock()
			}
		}
	}
}

// each splits [off, off+len(p)) by stripe and calls fn with the stripe,
// its block range [b0, b1), the bytes before the range's start in the
// first block (head) and after its end in the last (tail).
func (v *Volume) each(p []byte, off uint64, fn func(st *stripe, b0, b1, head, tail uint64, part []byte) error) error {
	stripeBytes := v.blocks * BlockSize
	for len(p) > 0 {
		si := off / stripeBytes
		in := off % stripeBytes
		n := min(uint64(len(p)), stripeBytes-in)
		b0, b1 := in/BlockSize, (in+n+BlockSize-1)/BlockSize
		head := in - b0*BlockSize
		tail := b1*BlockSize - (in + n)
		if err := fn(v.stripes[si], b0, b1, head, tail, p[:n]); err != nil {
			return err
		}
		p, off = p[n:], off+n
	}
	return nil
}

// lock takes the extent locks covering [b0, b1) in order.
func (st *stripe) lock(b0, b1 uint64, write bool) func() {
	e0, e1 := b0/extentBlocks, (b1-1)/extentBlocks
	for e := e0; e <= e1; e++ {
		if write {
			st.extents[e].Lock()
		} else {
			st.extents[e].RLock()
		}
	}
	return func() {
		for e := e0; e <= e1; e++ {
			if write {
				st.extents[e].Unlock()
			} else {
				st.extents[e].RUnlock()
			}
		}
	}
}

// snapshot returns the readable shard of each slot (nil if dead) and the
// replacements being rebuilt.
func (st *stripe) snapshot() (cur, next []*shard, lost bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	cur, next = make([]*shard, len(st.slots)), make([]*shard, len(st.slots))
	for i, s := range st.slots {
		if !s.dead {
			cur[i] = s.cur
		}
		next[i] = s.next
		lost = lost || s.lost
	}
	return cur, next, lost
}

// markDead stops reading sh in slot i and queues a rebuild. A slab that
// missed a write is never read again, so no stale piece is ever decoded.
func (v *Volume) markDead(st *stripe, i int, sh *shard, why error) {
	st.mu.Lock()
	s := &st.slots[i]
	if s.cur != sh || s.dead {
		st.mu.Unlock()
		return
	}
	s.dead = true
	st.mu.Unlock()
	v.m.deadSlabs.Inc()
	v.cfg.Logger.Warn("slab failed; rebuilding it elsewhere", "stripe", st.idx, "slot", i, "node", sh.donor.Node, "error", why)
	v.queue(st, i)
}

// Close releases every lease and stops background work.
func (v *Volume) Close() error {
	if v.cancel != nil {
		v.cancel()
	}
	v.wg.Wait()
	v.closeShards()
	if v.backup != nil {
		return v.backup.close()
	}
	return nil
}

func (v *Volume) closeShards() {
	var wg sync.WaitGroup
	for _, st := range v.stripes {
		st.mu.Lock()
		for _, s := range st.slots {
			for _, sh := range []*shard{s.cur, s.next} {
				if sh != nil {
					wg.Add(1)
					go func() { defer wg.Done(); sh.release() }()
				}
			}
		}
		st.mu.Unlock()
	}
	wg.Wait()
}

// watch marks a shard dead as soon as its connection ends.
func (v *Volume) watch(st *stripe, i int, sh *shard) {
	go func() {
		select {
		case <-sh.client.Done():
			v.markDead(st, i, sh, errors.New("connection to donor ended"))
		case <-v.done():
		}
	}()
}

func (v *Volume) done() <-chan struct{} { return v.ctx.Done() }
