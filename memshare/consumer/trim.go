package consumer

import "sync"

// Trim implements nbd.Export. In the split layout the whole blocks of the
// range are trimmed on every slab of their stripe: donors zero them and
// give the pages back to their kernel, and since every piece and every
// parity of those rows is then zero, the stripe stays decodable (the code
// is linear). Partial blocks, the whole layout (a data block's parity
// would need recomputing) and backup mode ignore it, as the protocol
// allows: trimmed bytes read back as zeros or as before.
func (v *Volume) Trim(off uint64, length uint32) error {
	if v.whole || v.backup != nil {
		return nil
	}
	first := (off + BlockSize - 1) / BlockSize
	end := (off + uint64(length)) / BlockSize
	for b := first; b < end; {
		si, in := b/v.blocks, b%v.blocks
		n := min(end-b, v.blocks-in)
		if err := v.trimStripe(v.stripes[si], in, in+n); err != nil {
			return err
		}
		b += n
	}
	return nil
}

// trimStripe trims blocks [b0, b1) of st on every live slab and every
// replacement; like a write, it succeeds when k slabs took it, and a slab
// that failed is never read again.
func (v *Volume) trimStripe(st *stripe, b0, b1 uint64) error {
	unlock := st.lock(b0, b1, true)
	defer unlock()
	cur, next, lost := st.snapshot()
	if lost {
		return ErrLost
	}
	soff, plen := b0*v.piece, (b1-b0)*v.piece
	type result struct {
		i    int
		sh   *shard
		next bool
		err  error
	}
	var (
		mu  sync.Mutex
		out []result
		wg  sync.WaitGroup
	)
	for i := range v.n {
		for _, s := range []struct {
			sh   *shard
			next bool
		}{{cur[i], false}, {next[i], true}} {
			if s.sh == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.sh.trim(soff, uint32(plen))
				mu.Lock()
				out = append(out, result{i, s.sh, s.next, err})
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	ok := 0
	for _, r := range out {
		switch {
		case r.err != nil && !r.next:
			v.markDead(st, r.i, r.sh, r.err)
		case r.err != nil:
			v.abortRebuild(st, r.i, r.sh, r.err)
		case !r.next:
			ok++
		}
	}
	if ok < v.k {
		return ErrLost
	}
	return nil
}
