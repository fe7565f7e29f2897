package place

import "sort"

// sortIntsBy is a stable sort of ints by a less function on values.
func sortIntsBy(xs []int, less func(a, b int) bool) {
	sort.SliceStable(xs, func(i, j int) bool { return less(xs[i], xs[j]) })
}
