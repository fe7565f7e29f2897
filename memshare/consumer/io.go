package consumer

import "github.com/caravan-dl/caravan/memshare/nbd"

// readBlocks fills out with blocks [b0, b1) of st: from the k data slabs
// when they answer, else decoded from any k live slabs.
func (v *Volume) readBlocks(st *stripe, b0, b1 uint64, out []byte) error {
	cur, _, lost := st.snapshot()
	if lost {
		return ErrLost
	}
	soff, plen := b0*v.piece, (b1-b0)*v.piece
	if v.backup != nil {
		return v.readBackupMode(st, cur[0], b0, out)
	}
	shards := make([][]byte, v.n)
	want := make([]int, 0, v.n)
	for i := range v.k {
		want = append(want, i)
	}
	got := v.readShards(st, cur, want, shards, soff, plen)
	if got < v.k {
		v.m.degradedReads.Inc()
		want = want[:0]
		for i := v.k; i < v.n; i++ {
			want = append(want, i)
		}
		got += v.readShards(st, cur, want, shards, soff, plen)
		if got < v.k {
			return ErrLost
		}
		if err := v.enc.ReconstructData(shards); err != nil {
			return ErrLost
		}
	}
	v.gather(shards, out, b1-b0)
	return nil
}

// readShards reads slot idx's range into shards[idx] for each live slot in
// want, all in flight at once; failed slots are marked dead. It returns
// the count read.
func (v *Volume) readShards(st *stripe, cur []*shard, want []int, shards [][]byte, soff, plen uint64) int {
	pend := make([]*nbd.Pending, len(want))
	bufs := make([][]byte, len(want))
	for j, i := range want {
		if sh := cur[i]; sh != nil {
			bufs[j] = make([]byte, plen)
			pend[j] = sh.client.ReadAtAsync(bufs[j], soff)
		}
	}
	n := 0
	for j, i := range want {
		if pend[j] == nil {
			continue
		}
		if err := pend[j].Wait(); err != nil {
			v.markDead(st, i, cur[i], err)
			continue
		}
		shards[i] = bufs[j]
		n++
	}
	return n
}

// writeBlocks codes blocks [b0, b1) and writes every piece; it succeeds
// when at least k slabs (which suffice to decode) took the write.
func (v *Volume) writeBlocks(st *stripe, b0, b1 uint64, data []byte) error {
	cur, next, lost := st.snapshot()
	if lost {
		return ErrLost
	}
	soff := b0 * v.piece
	if v.backup != nil {
		return v.writeBackupMode(st, cur[0], next[0], b0, data)
	}
	shards := v.scatter(data, b1-b0)
	if err := v.enc.Encode(shards); err != nil {
		return err
	}
	type sent struct {
		i    int
		sh   *shard
		next bool
		p    *nbd.Pending
	}
	var out []sent
	for i := range v.n {
		if sh := cur[i]; sh != nil {
			out = append(out, sent{i, sh, false, sh.client.WriteAtAsync(shards[i], soff)})
		}
		if sh := next[i]; sh != nil {
			out = append(out, sent{i, sh, true, sh.client.WriteAtAsync(shards[i], soff)})
		}
	}
	ok := 0
	for _, s := range out {
		err := s.p.Wait()
		switch {
		case err != nil && !s.next:
			v.markDead(st, s.i, s.sh, err)
		case err != nil:
			v.abortRebuild(st, s.i, s.sh, err)
		case !s.next:
			ok++
		}
	}
	if ok < v.k {
		return ErrLost
	}
	return nil
}

// scatter cuts each block into k pieces: shard i holds piece i of every
// block; parity shards are allocated empty for the encoder.
func (v *Volume) scatter(data []byte, nb uint64) [][]byte {
	shards := make([][]byte, v.n)
	plen := nb * v.piece
	for i := range shards {
		shards[i] = make([]byte, plen)
	}
	for b := range nb {
		blk := data[b*BlockSize : (b+1)*BlockSize]
		for i := range v.k {
			copy(shards[i][b*v.piece:(b+1)*v.piece], blk[uint64(i)*v.piece:])
		}
	}
	return shards
}

// gather is scatter's inverse over the data shards.
func (v *Volume) gather(shards [][]byte, out []byte, nb uint64) {
	for b := range nb {
		blk := out[b*BlockSize : (b+1)*BlockSize]
		for i := range v.k {
			copy(blk[uint64(i)*v.piece:(uint64(i)+1)*v.piece], shards[i][b*v.piece:])
		}
	}
}
