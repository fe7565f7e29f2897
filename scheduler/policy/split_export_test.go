package policy

// SetSplitMin sets the fewest items a part of a split pass gets and
// returns the old value (tests force small inputs through the split path).
func SetSplitMin(n int) int {
	old := splitMin
	splitMin = n
	return old
}
