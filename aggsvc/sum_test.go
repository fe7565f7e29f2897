package aggsvc

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// encodeAs turns float32 values into wire bytes of type t (rounded for halves).
func encodeAs(v []float32, t DType) []byte {
	b := make([]byte, len(v)*t.Size())
	for i, x := range v {
		switch t {
		case Float32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		case Float16:
			binary.LittleEndian.PutUint16(b[2*i:], f32ToF16(x))
		case BFloat16:
			binary.LittleEndian.PutUint16(b[2*i:], f32ToBF16(x))
		}
	}
	return b
}

func decodeAs(b []byte, t DType) []float64 {
	out := make([]float64, len(b)/t.Size())
	for i := range out {
		switch t {
		case Float32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		case Float16:
			out[i] = float64(f16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
		case BFloat16:
			out[i] = float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16))
		}
	}
	return out
}

// TestAllReduceMatchesFloat64 reduces random tensors of many shapes, worker
// counts, types and both ops, split over small partitions, and checks each
// element against a float64 sum of the exact values the workers sent.
func TestAllReduceMatchesFloat64(t *testing.T) {
	s := startServer(t, nil)
	addr := []string{s.Addr().String()}
	types := []struct {
		t   DType
		tol float64 // relative to the sum of magnitudes
	}{{Float32, 1e-6}, {Float16, 2e-3}, {BFloat16, 1e-2}}
	sizes := []int{1, 7, 8, 1000, 4099, 70001}
	for _, workers := range []int{1, 2, 3, 5, 8} {
		for _, ty := range types {
			for _, op := range []Op{OpSum, OpMean} {
				job := fmt.Sprintf("shapes-%d-%s-%d", workers, ty.t, op)
				t.Run(job, func(t *testing.T) {
					checkShapes(t, addr, job, workers, ty.t, op, ty.tol, sizes)
				})
			}
		}
	}
}

func checkShapes(t *testing.T, addr []string, job string, workers int, ty DType, op Op, tol float64, sizes []int) {
	clients := make([]*Client, workers)
	for r := range workers {
		clients[r] = dialWorker(t, addr, job, r, workers, func(c *ClientConfig) { c.PartitionElems = 4096 })
	}
	for step, n := range sizes {
		in := make([][]byte, workers)
		out := make([][]byte, workers)
		for r := range workers {
			rng := rand.New(rand.NewPCG(uint64(step), uint64(r)))
			in[r] = encodeAs(randVec(rng, n), ty)
			out[r] = append([]byte(nil), in[r]...)
		}
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for r := range workers {
			wg.Go(func() {
				errs[r] = clients[r].AllReduceBytes(within(t, 30e9), uint64(step), ty, op, out[r])
			})
		}
		wg.Wait()
		want, mag := reference(in, ty, op, workers)
		for r := range workers {
			if errs[r] != nil {
				t.Fatalf("size %d rank %d: %v", n, r, errs[r])
			}
			got := decodeAs(out[r], ty)
			for i := range got {
				if d := math.Abs(got[i] - want[i]); d > tol*mag[i]+1e-30 {
					t.Fatalf("size %d rank %d elem %d: got %v want %v (|diff| %g > %g)", n, r, i, got[i], want[i], d, tol*mag[i])
				}
			}
		}
	}
}

// reference is the float64 sum (or mean) and the sum of magnitudes.
func reference(in [][]byte, ty DType, op Op, workers int) (want, mag []float64) {
	for _, b := range in {
		v := decodeAs(b, ty)
		if want == nil {
			want, mag = make([]float64, len(v)), make([]float64, len(v))
		}
		for i, x := range v {
			want[i] += x
			mag[i] += math.Abs(x)
		}
	}
	if op == OpMean {
		for i := range want {
			want[i] /= float64(workers)
			mag[i] /= float64(workers)
		}
	}
	return want, mag
}

func TestHalfConversions(t *testing.T) {
	for h := range 1 << 16 {
		f := f16ToF32(uint16(h))
		if f != f { // NaN
			continue
		}
		if back := f32ToF16(f); back != uint16(h) {
			t.Fatalf("f16 %#04x -> %v -> %#04x", h, f, back)
		}
	}
	cases := map[float32]uint16{1: 0x3c00, -2: 0xc000, 65504: 0x7bff, 1e6: 0x7c00, 5.96e-8: 0x0001, 1e-9: 0}
	for f, want := range cases {
		if got := f32ToF16(f); got != want {
			t.Errorf("f32ToF16(%v) = %#04x, want %#04x", f, got, want)
		}
	}
	if got := f32ToBF16(1.00390625); got != 0x3f80 { // ties to even
		t.Errorf("bf16 tie: %#04x", got)
	}
}

func TestAddF32(t *testing.T) {
	for _, n := range []int{1000, 1003, 4099} {
		checkAdd(t, n)
	}
	for n := range 100 {
		checkAdd(t, n)
	}
}

// checkAdd covers the SIMD body and every tail length.
func checkAdd(t *testing.T, n int) {
	t.Helper()
	d, s := make([]float32, n), make([]float32, n)
	for i := range n {
		d[i], s[i] = float32(i), float32(2*i)
	}
	addF32(d, s)
	for i := range n {
		if d[i] != float32(3*i) {
			t.Fatalf("n=%d i=%d: %v", n, i, d[i])
		}
	}
}

// TestAccHalfMatchesScalar checks the SIMD half-precision folds against the
// portable ones: every float16 bit pattern, every tail length, copy and add.
func TestAccHalfMatchesScalar(t *testing.T) {
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	for _, bf16 := range []bool{false, true} {
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1 << 16} {
			src := all[:n]
			for _, first := range []bool{true, false} {
				got, want := make([]float32, n), make([]float32, n)
				for i := range got {
					got[i], want[i] = 1.5, 1.5
				}
				accHalf(got, src, bf16, first)
				accHalfGo(want, src, bf16, first)
				for i := range got {
					g, w := got[i], want[i]
					if g != w && (g == g || w == w) { // NaN == NaN here
						t.Fatalf("bf16=%v n=%d first=%v elem %d (%#04x): simd %v, scalar %v", bf16, n, first, i, src[i], g, w)
					}
				}
			}
		}
	}
}
