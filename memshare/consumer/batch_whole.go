package consumer

import "github.com/caravan-dl/caravan/memshare/nbd"

// wholeItem is a whole-layout request's state in a batch.
type wholeItem struct {
	cur, next []*shard
	read      *nbd.Pending   // a read: slot's rows
	want      []int          // a write: the row's other data slots...
	shards    [][]byte       // ...read into these
	pend      []*nbd.Pending // ...by these
	out       []wholeSent    // a write's block and parity writes
	slow      bool           // a slab failed: finish by writeWhole/readWhole
}

// runWhole serves a whole-layout batch (extent locks held) in two corked
// phases: every read (a read's block, a write's row neighbours), then
// every write's block and parity, so a batch costs two sends per donor
// rather than two per request. A request that meets a dead or failing
// slab finishes on the one-by-one path (readWhole, writeWhole), which
// decodes; acknowledgement rules are writeWhole's.
func (v *Volume) runWhole(items []*batchItem) {
	uncork := v.cork(items)
	for _, it := range items {
		v.startWhole(it)
	}
	uncork()
	for _, it := range items {
		v.awaitWhole(it)
	}
	uncork = v.cork(items)
	for _, it := range items {
		w := &it.wh
		if it.r.Write && !w.slow && it.r.Err == nil {
			w.out, it.r.Err = v.sendWhole(it.st, w.cur, w.next, it.slot, it.r0, it.r.Data, w.shards, nbd.NewGroup())
		}
	}
	uncork()
	for _, it := range items {
		w := &it.wh
		switch {
		case it.r.Err != nil:
		case w.slow && it.r.Write:
			it.r.Err = v.writeWhole(it.st, it.slot, it.r0, it.r1, it.r.Data)
		case w.slow:
			it.r.Err = v.readWhole(it.st, it.slot, it.r0, it.r1, it.r.Data)
		case it.r.Write:
			it.r.Err = v.finishWhole(it.st, w.out)
		}
	}
}

// startWhole sends it's first-phase reads.
func (v *Volume) startWhole(it *batchItem) {
	w := &it.wh
	cur, next, lost := it.st.snapshot()
	if lost {
		it.r.Err = ErrLost
		return
	}
	w.cur, w.next = cur, next
	soff := it.r0 * BlockSize
	if !it.r.Write {
		if cur[it.slot] == nil {
			w.slow = true
			return
		}
		w.read = cur[it.slot].readAsync(nbd.NewGroup(), it.r.Data, soff)
		return
	}
	for j := range v.k {
		if j == it.slot {
			continue
		}
		if cur[j] == nil {
			w.slow = true
			return
		}
		w.want = append(w.want, j)
	}
	w.shards = make([][]byte, v.n)
	w.pend = v.startShards(cur, w.want, w.shards, soff, (it.r1-it.r0)*BlockSize)
}

// awaitWhole waits for the first phase; a failed slab (marked dead)
// sends the request to the one-by-one path.
func (v *Volume) awaitWhole(it *batchItem) {
	w := &it.wh
	switch {
	case it.r.Err != nil || w.slow:
	case !it.r.Write:
		if err := w.read.Wait(); err != nil {
			v.markDead(it.st, it.slot, w.cur[it.slot], err)
			w.slow = true
		}
	default:
		if v.waitShards(it.st, w.cur, w.want, w.pend, w.shards) < len(w.want) {
			w.slow = true
		}
	}
}
