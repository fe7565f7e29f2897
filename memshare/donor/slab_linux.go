//go:build linux

package donor

import "syscall"

// allocSlab maps anonymous memory: pages cost nothing until written, and
// freeSlab returns them to the kernel at once (not at the next GC).
func allocSlab(n uint64) ([]byte, error) {
	return syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
}

func freeSlab(b []byte) { _ = syscall.Munmap(b) }

// trimSlab zeroes slab[off:off+n], giving whole pages back to the kernel.
func trimSlab(slab []byte, off, n uint64) {
	const page = 4096
	lo, hi := (off+page-1)/page*page, (off+n)/page*page
	if hi <= lo {
		clear(slab[off : off+n])
		return
	}
	clear(slab[off:lo])
	clear(slab[hi : off+n])
	if syscall.Madvise(slab[lo:hi], syscall.MADV_DONTNEED) != nil {
		clear(slab[lo:hi])
	}
}
