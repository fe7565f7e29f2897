//go:build !linux

package donor

func allocSlab(n uint64) ([]byte, error)  { return make([]byte, n), nil }
func freeSlab([]byte)                     {}
func trimSlab(slab []byte, off, n uint64) { clear(slab[off : off+n]) }
