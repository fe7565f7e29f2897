package policy

// SetSplitMin sets the fewest items (jobs, nodes) a part of a split pass
// gets and returns the old value (tests force small inputs through the
// split path).
func SetSplitMin(n int) int {
	old := splitMin
	splitMin, rereadMin = n, n
	return old
}

// CapacityDigest is f's capacity digest (capacity_hash.go) and layout
// count, as its last round left them (zero while the digest is off).
func CapacityDigest(f *Framework) [3]uint64 {
	if f == nil || f.free == nil || !f.free.hash.on {
		return [3]uint64{}
	}
	return [3]uint64{f.free.hash.a, f.free.hash.b, f.free.layout}
}
