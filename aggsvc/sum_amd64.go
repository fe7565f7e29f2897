package aggsvc

//go:noescape
func addF32AVX2(dst, src *float32, n int) int

func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

func xgetbv0() (eax uint32)

// hasAVX2 needs the CPU flag and the OS saving YMM state (OSXSAVE, XCR0).
var hasAVX2 = func() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, c1, _ := cpuid(1, 0)
	const osxsave, avx = 1 << 27, 1 << 28
	if c1&osxsave == 0 || c1&avx == 0 || xgetbv0()&6 != 6 {
		return false
	}
	_, b7, _, _ := cpuid(7, 0)
	return b7&(1<<5) != 0
}()

// addF32 adds src into dst element-wise (len(src) <= len(dst)) with AVX2
// where the CPU has it; see BenchmarkSumVsBandwidth.
func addF32(dst, src []float32) {
	n := len(src)
	if n == 0 {
		return
	}
	dst = dst[:n]
	if !hasAVX2 || n < 8 {
		addF32Go(dst, src)
		return
	}
	rest := addF32AVX2(&dst[0], &src[0], n)
	addF32Go(dst[n-rest:], src[n-rest:])
}
