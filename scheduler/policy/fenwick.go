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
