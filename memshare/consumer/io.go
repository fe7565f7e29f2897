package consumer

import (
	"sync"
)

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
// want, in parallel; failed slots are marked dead. It returns the count read.
func (v *Volume) readShards(st *stripe, cur []*shard, want []int, shards [][]byte, soff, plen uint64) int {
	var mu sync.Mutex
	n := 0
	parallel(want, func(i int) {
		sh := cur[i]
		if sh == nil {
			return
		}
		buf := make([]byte, plen)
		if err := sh.client.ReadAt(buf, soff); err != nil {
			v.markDead(st, i, sh, err)
			return
		}
		mu.Lock()
		shards[i] = buf
		n++
		mu.Unlock()
	})
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
	var mu sync.Mutex
	ok := 0
	all := make([]int, 0, 2*v.n)
	for i := range v.n {
		if cur[i] != nil {
			all = append(all, i)
		}
		if next[i] != nil {
			all = append(all, v.n+i)
		}
	}
	parallel(all, func(j int) {
		i, sh := j%v.n, cur[j%v.n]
		if j >= v.n {
			sh = next[i]
		}
		err := sh.client.WriteAt(shards[i], soff)
		switch {
		case err != nil && j < v.n:
			v.markDead(st, i, sh, err)
		case err != nil:
			v.abortRebuild(st, i, sh, err)
		case j < v.n:
			mu.Lock()
			ok++
			mu.Unlock()
		}
	})
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

// parallel runs fn for each index; the last runs on the caller.
func parallel(idx []int, fn func(int)) {
	if len(idx) == 0 {
		return
	}
	var wg sync.WaitGroup
	for _, i := range idx[:len(idx)-1] {
		wg.Add(1)
		go func() { defer wg.Done(); fn(i) }()
	}
	fn(idx[len(idx)-1])
	wg.Wait()
}
