package consumer

import (
	"context"
	"errors"
	"time"

	"github.com/caravan-dl/caravan/memshare"
)

// job asks for slot i of st to be re-homed on another donor.
type job struct {
	st *stripe
	i  int
}

// queue schedules a rebuild of slot i unless one is pending.
func (v *Volume) queue(st *stripe, i int) {
	st.mu.Lock()
	s := &st.slots[i]
	if s.queued || s.lost {
		st.mu.Unlock()
		return
	}
	s.queued = true
	st.mu.Unlock()
	go func() {
		select {
		case v.rebuildQ <- job{st, i}:
		case <-v.ctx.Done():
		}
	}()
}

func (v *Volume) rebuildLoop() {
	for {
		select {
		case <-v.ctx.Done():
			return
		case j := <-v.rebuildQ:
			err := v.rebuild(j.st, j.i)
			if err == nil {
				continue
			}
			v.cfg.Logger.Warn("rebuild failed", "stripe", j.st.idx, "slot", j.i, "error", err)
			j.st.mu.Lock()
			s := &j.st.slots[j.i]
			s.queued = false
			s.failures++
			lost, wait := s.lost, retryDelay(s.failures)
			j.st.mu.Unlock()
			if !lost {
				time.AfterFunc(wait, func() { v.queue(j.st, j.i) })
			}
		}
	}
}

// retryDelay backs off failed rebuilds (no donor free, say): 1 s doubling
// to 30 s.
func retryDelay(failures int) time.Duration {
	d := time.Second << min(failures-1, 5)
	return min(d, 30*time.Second)
}

// rebuild leases a replacement slab on a node the stripe does not use,
// fills it extent by extent (decoded from k live slabs, or copied from the
// slab itself when it is only being reclaimed) while writes also go to it,
// then swaps it in and releases the old lease.
func (v *Volume) rebuild(st *stripe, i int) error {
	start := time.Now()
	exclude := map[string]bool{}
	st.mu.Lock()
	for _, s := range st.slots {
		for _, sh := range []*shard{s.cur, s.next} {
			if sh != nil {
				exclude[sh.donor.Node] = true
			}
		}
	}
	st.mu.Unlock()
	ctx, cancel := context.WithTimeout(v.ctx, 10*time.Second)
	sh, err := v.leaseShard(ctx, exclude)
	cancel()
	if err != nil {
		return err
	}
	st.mu.Lock()
	st.slots[i].next = sh
	st.mu.Unlock()
	for e := uint64(0); e*extentBlocks < v.rows; e++ {
		if err := v.copyExtent(st, i, sh, e*extentBlocks, min((e+1)*extentBlocks, v.rows)); err != nil {
			v.abortRebuild(st, i, sh, err)
			return err
		}
	}
	st.mu.Lock()
	s := &st.slots[i]
	if s.next != sh {
		st.mu.Unlock()
		return errors.New("replacement slab failed during the rebuild")
	}
	old := s.cur
	s.cur, s.next, s.dead, s.queued, s.failures = sh, nil, false, false, 0
	st.mu.Unlock()
	v.watch(st, i, sh)
	go old.release()
	v.m.rebuilds.Inc()
	v.m.rebuildSeconds.Observe(time.Since(start).Seconds())
	v.cfg.Logger.Info("slab re-homed", "stripe", st.idx, "slot", i, "node", sh.donor.Node, "took", time.Since(start))
	return nil
}

// copyExtent writes slot i's piece of blocks [b0, b1) to sh under the
// extent's write lock.
func (v *Volume) copyExtent(st *stripe, i int, sh *shard, b0, b1 uint64) error {
	unlock := st.lock(b0, b1, true)
	defer unlock()
	piece, err := v.sourcePiece(st, i, b0, b1)
	if err != nil {
		return err
	}
	st.mu.Lock()
	live := st.slots[i].next == sh
	st.mu.Unlock()
	if !live {
		return errors.New("replacement slab was dropped")
	}
	return sh.writeAt(piece, b0*v.piece)
}

// sourcePiece returns slot i's bytes for blocks [b0, b1).
func (v *Volume) sourcePiece(st *stripe, i int, b0, b1 uint64) ([]byte, error) {
	cur, _, lost := st.snapshot()
	if lost {
		return nil, ErrLost
	}
	soff, plen := b0*v.piece, (b1-b0)*v.piece
	if sh := cur[i]; sh != nil { // reclaim: the slab still answers
		buf := make([]byte, plen)
		if err := sh.readAt(buf, soff); err == nil {
			return buf, nil
		} else {
			v.markDead(st, i, sh, err)
		}
	}
	if v.backup != nil {
		buf := make([]byte, plen)
		if err := v.backup.readAt(buf, v.fileOffset(st, b0)); err != nil {
			return nil, errBackup
		}
		return buf, nil
	}
	shards := make([][]byte, v.n)
	var want []int
	for j := range v.n {
		if j != i {
			want = append(want, j)
		}
	}
	if v.readShards(st, cur, want, shards, soff, plen) < v.k {
		v.markLost(st)
		return nil, ErrLost
	}
	if err := v.enc.Reconstruct(shards); err != nil {
		return nil, err
	}
	return shards[i], nil
}

// markLost records that st has fewer than k slabs: its I/O fails from now on.
func (v *Volume) markLost(st *stripe) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for j := range st.slots {
		if !st.slots[j].lost {
			st.slots[j].lost = true
		}
	}
	v.m.lostStripes.Inc()
	v.cfg.Logger.Error("stripe lost: more slabs failed than parity covers", "stripe", st.idx)
}

// abortRebuild drops a replacement slab that failed.
func (v *Volume) abortRebuild(st *stripe, i int, sh *shard, why error) {
	st.mu.Lock()
	dropped := st.slots[i].next == sh
	if dropped {
		st.slots[i].next = nil
	}
	st.mu.Unlock()
	if dropped {
		v.cfg.Logger.Warn("replacement slab failed", "stripe", st.idx, "slot", i, "error", why)
		go sh.release()
	}
}

// renewLoop renews every lease; a lease that cannot be renewed is a dead
// slab, and one its donor reclaims is moved elsewhere.
func (v *Volume) renewLoop() {
	t := time.NewTicker(v.cfg.RenewInterval)
	defer t.Stop()
	for {
		select {
		case <-v.ctx.Done():
			return
		case <-t.C:
			v.RenewNow()
		}
	}
}

// RenewNow renews every lease once.
func (v *Volume) RenewNow() {
	for _, st := range v.stripes {
		for i := range v.n {
			st.mu.Lock()
			s := st.slots[i]
			st.mu.Unlock()
			if s.cur != nil && !s.dead {
				v.renewOne(st, i, s.cur, false)
			}
			if s.next != nil {
				v.renewOne(st, i, s.next, true)
			}
		}
	}
}

func (v *Volume) renewOne(st *stripe, i int, sh *shard, next bool) {
	ctx, cancel := context.WithTimeout(v.ctx, 3*time.Second)
	defer cancel()
	l, err := sh.api.Renew(ctx, sh.leaseID())
	switch {
	case err != nil && next:
		v.abortRebuild(st, i, sh, err)
	case err != nil:
		v.markDead(st, i, sh, err)
	default:
		sh.mu.Lock()
		sh.lease = l
		sh.mu.Unlock()
		if l.State == memshare.LeaseReclaiming && !next {
			v.m.reclaims.Inc()
			v.queue(st, i)
		}
	}
}
