package aggsvc

import "unsafe"

// addF32Go adds src into dst element-wise (len(src) <= len(dst)): the
// portable kernel and the tail of the AVX2 one. The loop is unrolled by
// eight over re-sliced windows so the compiler drops the bounds checks.
func addF32Go(dst, src []float32) {
	n := len(src)
	dst = dst[:n]
	i := 0
	for ; i+8 <= n; i += 8 {
		d := dst[i : i+8 : i+8]
		s := src[i : i+8 : i+8]
		d[0] += s[0]
		d[1] += s[1]
		d[2] += s[2]
		d[3] += s[3]
		d[4] += s[4]
		d[5] += s[5]
		d[6] += s[6]
		d[7] += s[7]
	}
	for ; i < n; i++ {
		dst[i] += src[i]
	}
}

// scaleF32 multiplies every element by f (the mean's 1/workers).
func scaleF32(dst []float32, f float32) {
	for i := range dst {
		dst[i] *= f
	}
}

// f32s views little-endian bytes as float32s. b must be 4-byte aligned (frame
// bodies are, and the push header keeps data aligned) and the host little
// endian, which every platform Caravan targets is.
func f32s(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// f32Bytes views float32s as their little-endian bytes.
func f32Bytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// u16s views little-endian bytes as uint16s (half-precision bit patterns).
func u16s(b []byte) []uint16 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}

// accumulate folds one pushed partition into acc: copied when first, summed
// in place after.
func accumulate(acc []float32, data []byte, t DType, first bool) {
	switch t {
	case Float32:
		if first {
			copy(acc, f32s(data))
		} else {
			addF32(acc, f32s(data))
		}
	case Float16:
		accHalf(acc, u16s(data), false, first)
	case BFloat16:
		accHalf(acc, u16s(data), true, first)
	}
}

// accHalfGo is the portable half-precision fold and the SIMD kernels' tail.
func accHalfGo(acc []float32, src []uint16, bf16, first bool) {
	if bf16 {
		addBF16(acc, src, first)
	} else {
		addHalf(acc, src, &f16Table, first)
	}
}

// encodeResult writes acc in the wire type t into out (len = n*t.Size()).
func encodeResult(out []byte, acc []float32, t DType) {
	switch t {
	case Float32:
		copy(f32s(out), acc)
	case Float16:
		o := u16s(out)
		for i, v := range acc {
			o[i] = f32ToF16(v)
		}
	case BFloat16:
		o := u16s(out)
		for i, v := range acc {
			o[i] = f32ToBF16(v)
		}
	}
}
