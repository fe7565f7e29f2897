package consumer

import "github.com/caravan-dl/caravan/memshare/nbd"

// Whole layout: slot s < k holds stripe blocks [s·rows, (s+1)·rows) whole;
// parity slot p at row r codes row r of the k data slots.

// readWhole reads rows [r0, r1) of data slot i: one donor when it answers,
// else decoded from k others.
func (v *Volume) readWhole(st *stripe, i int, r0, r1 uint64, out []byte) error {
	cur, _, lost := st.snapshot()
	if lost {
		return ErrLost
	}
	soff := r0 * BlockSize
	if sh := cur[i]; sh != nil {
		err := sh.readAt(out, soff)
		if err == nil {
			return nil
		}
		v.markDead(st, i, sh, err)
	}
	v.m.degradedReads.Inc()
	shards, err := v.rowsExcept(st, cur, i, r0, r1, true)
	if err != nil {
		return err
	}
	copy(out, shards[i])
	return nil
}

// rowsExcept returns the data shards of rows [r0, r1), reading every slot
// but skip. With need, skip's shard is decoded from the others; without
// (a write replacing it), it comes back zeroed when the other data slots
// answer, and decoding is only used to stand in for a lost one.
func (v *Volume) rowsExcept(st *stripe, cur []*shard, skip int, r0, r1 uint64, need bool) ([][]byte, error) {
	soff, plen := r0*BlockSize, (r1-r0)*BlockSize
	shards := make([][]byte, v.n)
	var want []int
	for j := range v.k {
		if j != skip {
			want = append(want, j)
		}
	}
	got := v.readShards(st, cur, want, shards, soff, plen)
	if !need && allData(shards, v.k, skip) {
		shards[skip] = make([]byte, plen)
		return shards, nil
	}
	// A data slab is gone: decode from any k, counting skip's old blocks
	// when it is only being replaced (when it is wanted, it failed).
	want = want[:0]
	for j := v.k; j < v.n; j++ {
		want = append(want, j)
	}
	if !need {
		want = append(want, skip)
	}
	got += v.readShards(st, cur, want, shards, soff, plen)
	if got < v.k {
		return nil, ErrLost
	}
	if err := v.enc.ReconstructData(shards); err != nil {
		return nil, ErrLost
	}
	return shards, nil
}

func allData(shards [][]byte, k, skip int) bool {
	for j := range k {
		if j != skip && shards[j] == nil {
			return false
		}
	}
	return true
}

// writeWhole replaces rows [r0, r1) of data slot i: it reads the row's
// other data blocks (decoding them if a slab is gone), recomputes the
// parity, and writes slot i and the r parity slots. It succeeds when the
// stripe still has k live slabs afterwards (every live slab then agrees).
func (v *Volume) writeWhole(st *stripe, i int, r0, r1 uint64, data []byte) error {
	cur, next, lost := st.snapshot()
	if lost {
		return ErrLost
	}
	shards, err := v.rowsExcept(st, cur, i, r0, r1, false)
	if err != nil {
		return err
	}
	out, err := v.sendWhole(st, cur, next, i, r0, data, shards, nbd.NewGroup())
	if err != nil {
		return err
	}
	return v.finishWhole(st, out)
}

// wholeSent is one block write of a whole-layout write.
type wholeSent struct {
	j    int
	sh   *shard
	next bool
	p    *nbd.Pending
}

// sendWhole codes the row (shards holds the other data blocks) and sends
// data to slot i and the parity to the r parity slots (and to their
// replacements being rebuilt), in g.
func (v *Volume) sendWhole(st *stripe, cur, next []*shard, i int, r0 uint64, data []byte, shards [][]byte, g *nbd.Group) ([]wholeSent, error) {
	shards[i] = data
	parity := make([]byte, (v.n-v.k)*len(data))
	for p := v.k; p < v.n; p++ {
		shards[p] = parity[(p-v.k)*len(data) : (p-v.k+1)*len(data)]
	}
	if err := v.enc.Encode(shards); err != nil {
		return nil, err
	}
	soff := r0 * BlockSize
	out := make([]wholeSent, 0, 2*(v.n-v.k+1))
	for j := range v.n {
		if j != i && j < v.k {
			continue
		}
		if sh := cur[j]; sh != nil {
			out = append(out, wholeSent{j, sh, false, sh.writeAsync(g, shards[j], soff)})
		}
		if sh := next[j]; sh != nil {
			out = append(out, wholeSent{j, sh, true, sh.writeAsync(g, shards[j], soff)})
		}
	}
	return out, nil
}

// finishWhole waits for sendWhole's writes; a slab that missed one is
// dead before the write is acknowledged, which needs k live slabs left
// (every live slab then agrees).
func (v *Volume) finishWhole(st *stripe, out []wholeSent) error {
	for _, s := range out {
		if err := s.p.Wait(); err != nil {
			if s.next {
				v.abortRebuild(st, s.j, s.sh, err)
			} else {
				v.markDead(st, s.j, s.sh, err)
			}
		}
	}
	live, _, _ := st.snapshot()
	n := 0
	for _, sh := range live {
		if sh != nil {
			n++
		}
	}
	if n < v.k {
		return ErrLost
	}
	return nil
}
