//go:build !amd64

package aggsvc

// addF32 adds src into dst element-wise (len(src) <= len(dst)).
func addF32(dst, src []float32) { addF32Go(dst, src) }

// accHalf folds float16 (or bfloat16) bits into acc.
func accHalf(acc []float32, src []uint16, bf16, first bool) { accHalfGo(acc, src, bf16, first) }
