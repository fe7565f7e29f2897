package order

import "math/bits"

// The radix sort's passes split across workers (parallel.go). A stable
// counting-sort pass splits exactly: each worker counts its range's
// digits, and a key's place is the count of smaller digits overall plus
// that of its own digit in the ranges before it, plus its rank in its
// own range, which is where the serial pass puts it. So every pass, and
// the sort, is the serial one's result for any number of workers.

// fieldsPar is fields with the keys split across w workers.
func (r *radix) fieldsPar(ks []keyed, w int) (differ [4]uint64) {
	var ands, ors [maxWorkers][4]uint64
	forRanges(len(ks), w, func(k, lo, hi int) {
		ands[k], ors[k] = r.fieldRange(ks, lo, hi)
	})
	and := [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	var or [4]uint64
	for k := range w {
		for f := range and {
			and[f] &= ands[k][f]
			or[f] |= ors[k][f]
		}
	}
	for f := range differ {
		differ[f] = and[f] ^ or[f]
	}
	return differ
}

// fieldRange maps the fields of ks[lo:hi] to their integers and returns
// the AND and OR of each field's.
func (r *radix) fieldRange(ks []keyed, lo, hi int) (and, or [4]uint64) {
	f0, f1, f2, fq := r.field[0], r.field[1], r.field[2], r.field[3]
	and = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	for i := lo; i < hi; i++ {
		k := &ks[i]
		a, b, c, q := floatKey(k.k[0]), floatKey(k.k[1]), floatKey(k.k[2]), uint64(k.queue)^1<<63
		f0[i], f1[i], f2[i], fq[i] = a, b, c, q
		and[0], and[1], and[2], and[3] = and[0]&a, and[1]&b, and[2]&c, and[3]&q
		or[0], or[1], or[2], or[3] = or[0]|a, or[1]|b, or[2]|c, or[3]|q
	}
	return and, or
}

// digit is one counting-sort pass: the bits (k>>shift)&mask.
type digit struct {
	shift uint
	mask  uint64
}

// digits lists the passes sort makes for the bits of differ.
func digits(differ uint64) (ds [6]digit, n int) {
	lo := bits.TrailingZeros64(differ)
	if w := 64 - bits.LeadingZeros64(differ) - lo; w <= maxDigit {
		ds[0] = digit{uint(lo), 1<<w - 1}
		return ds, 1
	}
	const m = 1<<maxDigit - 1
	for d := range 6 {
		if (differ>>(11*d))&m != 0 {
			ds[n] = digit{uint(11 * d), m}
			n++
		}
	}
	return ds, n
}

// parCounts is every worker's histogram of one digit.
type parCounts [maxWorkers][1 << maxDigit]int32

// sortPar is sort with every pass split across w workers: the gather
// (with the first digit's counts), then per digit a count (after the
// first) and a scatter.
func (r *radix) sortPar(idx []int32, f int, differ uint64, w int) []int32 {
	n := len(idx)
	keys, key := r.keys[:n], r.field[f]
	ds, nd := digits(differ)
	if r.cnt == nil {
		r.cnt = new(parCounts)
	}
	cnt := r.cnt
	forRanges(n, w, func(k, lo, hi int) {
		c, d := &cnt[k], ds[0]
		clear(c[:d.mask+1])
		for i := lo; i < hi; i++ {
			x := key[idx[i]]
			keys[i] = x
			c[(x>>d.shift)&d.mask]++
		}
	})
	for t, d := range ds[:nd] {
		if t > 0 {
			forRanges(n, w, func(k, lo, hi int) {
				c := &cnt[k]
				clear(c[:d.mask+1])
				for _, x := range keys[lo:hi] {
					c[(x>>d.shift)&d.mask]++
				}
			})
		}
		idx, keys = r.scatterPar(idx, keys, d, w)
	}
	return idx
}

// scatterPar is scatter split across w workers, from r.cnt's per-worker
// counts of digit d (they become each worker's running offsets).
func (r *radix) scatterPar(idx []int32, keys []uint64, d digit, w int) ([]int32, []uint64) {
	cnt := r.cnt
	sum := int32(0)
	for v := range int(d.mask) + 1 {
		for k := range w {
			cnt[k][v], sum = sum, sum+cnt[k][v]
		}
	}
	out, oidx := r.keys2[:len(keys)], r.idx2[:len(keys)]
	forRanges(len(keys), w, func(k, lo, hi int) {
		c := &cnt[k]
		for i := lo; i < hi; i++ {
			x := keys[i]
			v := (x >> d.shift) & d.mask
			p := c[v]
			oidx[p], out[p] = idx[i], x
			c[v] = p + 1
		}
	})
	r.keys2, r.keys = keys[:cap(keys)], out[:cap(out)]
	r.idx2 = idx[:cap(idx)]
	return oidx, out
}
