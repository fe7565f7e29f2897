package consumer

import (
	"cmp"
	"slices"
	"sync"

	"github.com/caravan-dl/caravan/memshare/nbd"
)

// DoBatch implements nbd.BatchExport. Aligned requests that each stay in
// one stripe (whole layout: in one slot) and share no extent with another
// are served together: their extents locked in one ordered pass, every piece sent
// with the donor connections corked (one send per donor for the whole
// batch), then all awaited. The rest run one by one, concurrently. The
// guarantees are ReadAt's and WriteAt's: a write is acknowledged only
// once k slabs took it, and a slab that missed it is dead first.
func (v *Volume) DoBatch(reqs []*nbd.BatchRequest) {
	fast, slow := v.partition(reqs)
	var wg sync.WaitGroup
	for _, r := range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.Write {
				r.Err = v.WriteAt(r.Data, r.Off, false)
			} else {
				r.Err = v.ReadAt(r.Data, r.Off)
			}
		}()
	}
	if len(fast) > 0 {
		v.runFast(fast)
	}
	wg.Wait()
}

// batchItem is one request of the fast path: stripe st, blocks [b0, b1),
// which are rows [r0, r1) of slot (whole layout; split: every slot, and
// rows are blocks).
type batchItem struct {
	r      *nbd.BatchRequest
	st     *stripe
	b0, b1 uint64
	slot   int
	r0, r1 uint64
	rop    *readOp
	wop    writeOp
	wh     wholeItem
}

type extentKey struct{ stripe, extent uint64 }

// partition picks the requests the fast path can take.
func (v *Volume) partition(reqs []*nbd.BatchRequest) (fast []*batchItem, slow []*nbd.BatchRequest) {
	if v.backup != nil {
		return nil, reqs
	}
	stripeBytes := v.blocks * BlockSize
	taken := map[extentKey]bool{}
	for _, r := range reqs {
		n := uint64(len(r.Data))
		si, in := r.Off/stripeBytes, r.Off%stripeBytes
		if n == 0 || r.Off%BlockSize != 0 || n%BlockSize != 0 || in+n > stripeBytes {
			slow = append(slow, r)
			continue
		}
		it := &batchItem{r: r, st: v.stripes[si], b0: in / BlockSize, b1: (in + n) / BlockSize}
		segs := v.segments(it.b0, it.b1)
		if len(segs) != 1 { // whole layout: the request spans two slots
			slow = append(slow, r)
			continue
		}
		it.slot, it.r0, it.r1 = segs[0].slot, segs[0].r0, segs[0].r1
		keys := it.extents(si)
		if slices.ContainsFunc(keys, func(k extentKey) bool { return taken[k] }) {
			slow = append(slow, r)
			continue
		}
		for _, k := range keys {
			taken[k] = true
		}
		fast = append(fast, it)
	}
	return fast, slow
}

func (it *batchItem) extents(si uint64) []extentKey {
	var ks []extentKey
	for e := it.r0 / extentBlocks; e <= (it.r1-1)/extentBlocks; e++ {
		ks = append(ks, extentKey{si, e})
	}
	return ks
}

// runFast serves the fast requests: lock, send corked, uncork, wait.
func (v *Volume) runFast(items []*batchItem) {
	type lk struct {
		key   extentKey
		mu    *sync.RWMutex
		write bool
	}
	var locks []lk
	for _, it := range items {
		for _, k := range it.extents(uint64(it.st.idx)) {
			locks = append(locks, lk{k, &it.st.extents[k.extent], it.r.Write})
		}
	}
	slices.SortFunc(locks, func(a, b lk) int {
		return cmp.Or(cmp.Compare(a.key.stripe, b.key.stripe), cmp.Compare(a.key.extent, b.key.extent))
	})
	for _, l := range locks {
		if l.write {
			l.mu.Lock()
		} else {
			l.mu.RLock()
		}
	}
	defer func() {
		for _, l := range locks {
			if l.write {
				l.mu.Unlock()
			} else {
				l.mu.RUnlock()
			}
		}
	}()
	if v.whole {
		v.runWhole(items)
		return
	}
	uncork := v.cork(items)
	for _, it := range items {
		if it.r.Write {
			it.wop, it.r.Err = v.issueWrite(it.st, it.b0, it.b1, it.r.Data)
		} else {
			it.rop, it.r.Err = v.issueRead(it.st, it.b0, it.b1)
		}
	}
	uncork()
	for _, it := range items {
		switch {
		case it.r.Err != nil:
		case it.r.Write:
			it.r.Err = v.finishWrite(it.st, it.wop)
		default:
			it.r.Err = v.finishRead(it.st, it.rop, it.r.Data)
		}
	}
}

// cork corks the connections of every slab of the items' stripes and
// returns the uncork.
func (v *Volume) cork(items []*batchItem) func() {
	seen := map[*stripe]bool{}
	corked := map[*nbd.Client]bool{}
	var clients []*nbd.Client
	for _, it := range items {
		if seen[it.st] {
			continue
		}
		seen[it.st] = true
		cur, next, _ := it.st.snapshot()
		for _, sh := range slices.Concat(cur, next) {
			if sh != nil && !corked[sh.client] {
				corked[sh.client] = true
				sh.client.Cork()
				clients = append(clients, sh.client)
			}
		}
	}
	return func() {
		for _, c := range clients {
			c.Uncork()
		}
	}
}
