package policy

// fenwick is a binary indexed tree of float sums, so "GPU share held by
// preemptable jobs ranked below i" costs O(log n) per query and update.
type fenwick struct{ t []float64 }

func (f *fenwick) add(i int, v float64) {
	if f == nil || i < 0 {
		return
	}
	for i++; i < len(f.t); i += i & -i {
		f.t[i] += v
	}
}

// prefix sums entries [0, i).
func (f *fenwick) prefix(i int) float64 {
	s := 0.0
	for ; i > 0; i -= i & -i {
		s += f.t[i]
	}
	return s
}

// sumFrom sums entries [i, n).
func (f *fenwick) sumFrom(i int) float64 {
	if f == nil {
		return 0
	}
	return f.prefix(len(f.t)-1) - f.prefix(i)
}

// fill makes, in a zeroed tree, the tree of entries val(i) for each i
// of idx (increasing): in one pass (each node adds itself to its parent)
// when every sum is exact, where one add per entry took O(n log n) (a
// churned decision at 10,000 nodes indexes ~40,000 running jobs). The
// one pass associates the sums differently, so it is taken only for
// dyadic entries (GPU shares in quarters, whole GPUs) with a dyadic
// total: every node then holds the same bits as adding them would.
func (f *fenwick) fill(idx []int, val func(i int) float64) {
	exact, sum := true, 0.0
	for _, i := range idx {
		v := val(i)
		f.t[i+1] = v
		exact, sum = exact && dyadic(v), sum+v
	}
	if !exact || !dyadic(sum) { // the sums round: add by add, as always
		clear(f.t)
		for _, i := range idx {
			f.add(i, val(i))
		}
		return
	}
	for i := 1; i < len(f.t); i++ {
		if j := i + i&-i; j < len(f.t) {
			f.t[j] += f.t[i]
		}
	}
}
