//go:build !amd64

package aggsvc

// addF32 adds src into dst element-wise (len(src) <= len(dst)).
func addF32(dst, src []float32) { addF32Go(dst, src) }
