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
	shards[i] = data
	for p := v.k; p < v.n; p++ {
		shards[p] = make([]byte, len(data))
	}
	if err := v.enc.Encode(shards); err != nil {
		return err
	}
	soff := r0 * BlockSize
	type sent struct {
		j    int
		sh   *shard
		next bool
		p    interface{ Wait() error }
	}
	var out []sent
	g := nbd.NewGroup()
	targets := []int{i}
	for p := v.k; p < v.n; p++ {
		targets = append(targets, p)
	}
	for _, j := range targets {
		if sh := cur[j]; sh != nil {
			out = append(out, sent{j, sh, false, sh.writeAsync(g, shards[j], soff)})
		}
		if sh := next[j]; sh != nil {
			out = append(out, sent{j, sh, true, sh.writeAsync(g, shards[j], soff)})
		}
	}
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
