package consumer

import "github.com/caravan-dl/caravan/memshare/nbd"

// readBlocks fills out with blocks [b0, b1) of st: from the k data slabs
// when they answer, else decoded from any k live slabs.
func (v *Volume) readBlocks(st *stripe, b0, b1 uint64, out []byte) error {
	if v.backup != nil {
		cur, _, lost := st.snapshot()
		if lost {
			return ErrLost
		}
		return v.readBackupMode(st, cur[0], b0, out)
	}
	op, err := v.issueRead(st, b0, b1)
	if err != nil {
		return err
	}
	return v.finishRead(st, op, out)
}

// readOp is a split-layout read sent to the k data slabs.
type readOp struct {
	cur        []*shard
	shards     [][]byte
	soff, plen uint64
	nb         uint64
	want       []int
	pend       []*nbd.Pending
}

func (v *Volume) issueRead(st *stripe, b0, b1 uint64) (*readOp, error) {
	cur, _, lost := st.snapshot()
	if lost {
		return nil, ErrLost
	}
	op := &readOp{cur: cur, shards: make([][]byte, v.n), soff: b0 * v.piece, plen: (b1 - b0) * v.piece, nb: b1 - b0}
	for i := range v.k {
		op.want = append(op.want, i)
	}
	op.pend = v.startShards(cur, op.want, op.shards, op.soff, op.plen)
	return op, nil
}

// finishRead waits for op and decodes from the parity slabs if a data
// slab failed.
func (v *Volume) finishRead(st *stripe, op *readOp, out []byte) error {
	got := v.waitShards(st, op.cur, op.want, op.pend, op.shards)
	if got < v.k {
		v.m.degradedReads.Inc()
		var want []int
		for i := v.k; i < v.n; i++ {
			want = append(want, i)
		}
		got += v.readShards(st, op.cur, want, op.shards, op.soff, op.plen)
		if got < v.k {
			return ErrLost
		}
		if err := v.enc.ReconstructData(op.shards); err != nil {
			return ErrLost
		}
	}
	v.gather(op.shards, out, op.nb)
	return nil
}

// readShards reads slot idx's range into shards[idx] for each live slot in
// want, all in flight at once; failed slots are marked dead. It returns
// the count read.
func (v *Volume) readShards(st *stripe, cur []*shard, want []int, shards [][]byte, soff, plen uint64) int {
	return v.waitShards(st, cur, want, v.startShards(cur, want, shards, soff, plen), shards)
}

// startShards sends the reads of readShards; shards[i] is the buffer.
func (v *Volume) startShards(cur []*shard, want []int, shards [][]byte, soff, plen uint64) []*nbd.Pending {
	pend := make([]*nbd.Pending, len(want))
	g := nbd.NewGroup()
	all := make([]byte, uint64(len(want))*plen) // one allocation for every piece
	for j, i := range want {
		if sh := cur[i]; sh != nil {
			shards[i] = all[uint64(j)*plen : uint64(j+1)*plen : uint64(j+1)*plen]
			pend[j] = sh.readAsync(g, shards[i], soff)
		}
	}
	return pend
}

// waitShards waits for startShards' reads; a failed slot is marked dead
// and its buffer dropped.
func (v *Volume) waitShards(st *stripe, cur []*shard, want []int, pend []*nbd.Pending, shards [][]byte) int {
	n := 0
	for j, i := range want {
		if pend[j] == nil {
			continue
		}
		if err := pend[j].Wait(); err != nil {
			shards[i] = nil
			v.markDead(st, i, cur[i], err)
			continue
		}
		n++
	}
	return n
}

// writeBlocks codes blocks [b0, b1) and writes every piece; it succeeds
// when at least k slabs (which suffice to decode) took the write.
func (v *Volume) writeBlocks(st *stripe, b0, b1 uint64, data []byte) error {
	if v.backup != nil {
		cur, next, lost := st.snapshot()
		if lost {
			return ErrLost
		}
		return v.writeBackupMode(st, cur[0], next[0], b0, data)
	}
	op, err := v.issueWrite(st, b0, b1, data)
	if err != nil {
		return err
	}
	return v.finishWrite(st, op)
}

// writeOp is a split-layout write sent to every live slab and every
// replacement being rebuilt.
type writeOp []sentPiece

type sentPiece struct {
	i    int
	sh   *shard
	next bool
	p    *nbd.Pending
}

func (v *Volume) issueWrite(st *stripe, b0, b1 uint64, data []byte) (writeOp, error) {
	cur, next, lost := st.snapshot()
	if lost {
		return nil, ErrLost
	}
	shards := v.scatter(data, b1-b0)
	if err := v.enc.Encode(shards); err != nil {
		return nil, err
	}
	soff := b0 * v.piece
	out := make(writeOp, 0, v.n)
	g := nbd.NewGroup()
	for i := range v.n {
		if sh := cur[i]; sh != nil {
			out = append(out, sentPiece{i, sh, false, sh.writeAsync(g, shards[i], soff)})
		}
		if sh := next[i]; sh != nil {
			out = append(out, sentPiece{i, sh, true, sh.writeAsync(g, shards[i], soff)})
		}
	}
	return out, nil
}

// finishWrite waits for op; a slab that missed the write is marked dead
// before the write is acknowledged.
func (v *Volume) finishWrite(st *stripe, op writeOp) error {
	ok := 0
	for _, s := range op {
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
	all := make([]byte, uint64(v.n)*plen) // one allocation for every piece
	for i := range shards {
		shards[i] = all[uint64(i)*plen : uint64(i+1)*plen : uint64(i+1)*plen]
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
