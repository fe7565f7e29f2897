package aggsvc

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkSumVsBandwidth folds one float32 partition into another (the
// server's inner loop) and, in the same iterations over the same buffers,
// runs the memory-bandwidth reference kernels: copy (memmove, SIMD) and
// a STREAM-style add. Traffic counts bytes read plus written: 3n for the
// in-place sum, 2n for copy. pct_of_bw is sum traffic / copy traffic.
//
//	go test -run '^$' -bench SumVsBandwidth -benchtime 2s ./aggsvc
func BenchmarkSumVsBandwidth(b *testing.B) {
	for _, n := range []int{16 << 10, 256 << 10, 1 << 20, 16 << 20} { // elements
		b.Run(fmt.Sprintf("elems=%d", n), func(b *testing.B) {
			dst, src := make([]float32, n), make([]float32, n)
			for i := range src {
				src[i] = float32(i%97) * 0.5
			}
			var tSum, tCopy time.Duration
			for b.Loop() {
				t0 := time.Now()
				addF32(dst, src)
				t1 := time.Now()
				copy(dst, src)
				tCopy += time.Since(t1)
				tSum += t1.Sub(t0)
			}
			bytes := float64(4*n) * float64(b.N)
			sumBW := 3 * bytes / tSum.Seconds() / 1e9
			copyBW := 2 * bytes / tCopy.Seconds() / 1e9
			b.ReportMetric(sumBW, "sum_GB/s")
			b.ReportMetric(copyBW, "copy_GB/s")
			b.ReportMetric(100*sumBW/copyBW, "pct_of_bw")
			b.ReportMetric(float64(4*n)*float64(b.N)/tSum.Seconds()/1e9, "folded_GB/s")
		})
	}
}

// BenchmarkAccumulateHalf measures the float16 and bfloat16 fold (convert
// and add into the float32 accumulator).
func BenchmarkAccumulateHalf(b *testing.B) {
	const n = 1 << 20
	acc := make([]float32, n)
	data := make([]byte, 2*n)
	for _, t := range []DType{Float16, BFloat16} {
		b.Run(t.String(), func(b *testing.B) {
			b.SetBytes(2 * n)
			for b.Loop() {
				accumulate(acc, data, t, false)
			}
		})
	}
}
