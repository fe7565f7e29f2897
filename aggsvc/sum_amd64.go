package aggsvc

//go:noescape
func addF32AVX2(dst, src *float32, n int) int

//go:noescape
func accF16F16C(dst *float32, src *uint16, n int, first bool) int

//go:noescape
func accBF16AVX2(dst *float32, src *uint16, n int, first bool) int

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

// hasF16C: VCVTPH2PS (CPUID.1:ECX bit 29), used together with AVX2.
var hasF16C = func() bool {
	_, _, c1, _ := cpuid(1, 0)
	return hasAVX2 && c1&(1<<29) != 0
}()

// accHalf folds float16 (or bfloat16) bits into acc with SIMD where it can,
// leaving the tail to the Go loops.
func accHalf(acc []float32, src []uint16, bf16, first bool) {
	n := len(src)
	if n < 8 || !hasAVX2 || (!bf16 && !hasF16C) {
		accHalfGo(acc, src, bf16, first)
		return
	}
	var rest int
	if bf16 {
		rest = accBF16AVX2(&acc[0], &src[0], n, first)
	} else {
		rest = accF16F16C(&acc[0], &src[0], n, first)
	}
	accHalfGo(acc[n-rest:], src[n-rest:], bf16, first)
}

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
