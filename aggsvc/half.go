package aggsvc

import "math"

// f16Table maps every IEEE half bit pattern to its float32 value: one load
// per element instead of branchy bit surgery in the summation loop.
var f16Table = func() (t [1 << 16]float32) {
	for i := range t {
		t[i] = f16ToF32(uint16(i))
	}
	return
}()

func f16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: value = mant * 2^-24
		v := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// f32ToF16 rounds to nearest even, overflowing to infinity.
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - e)
		return sign | uint16(roundShift(mant, shift))
	}
	v := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && v&1 == 1) {
		v++ // may carry into the exponent, which is the right answer
	}
	return sign | uint16(v)
}

// roundShift shifts right by s rounding to nearest even.
func roundShift(v, s uint32) uint32 {
	q := v >> s
	rem := v & (1<<s - 1)
	half := uint32(1) << (s - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return q
}

// f32ToBF16 rounds to nearest even; NaN stays NaN.
func f32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

func addHalf(acc []float32, src []uint16, t *[1 << 16]float32, first bool) {
	acc = acc[:len(src)]
	if first {
		for i, h := range src {
			acc[i] = t[h]
		}
		return
	}
	for i, h := range src {
		acc[i] += t[h]
	}
}

func addBF16(acc []float32, src []uint16, first bool) {
	acc = acc[:len(src)]
	if first {
		for i, h := range src {
			acc[i] = math.Float32frombits(uint32(h) << 16)
		}
		return
	}
	for i, h := range src {
		acc[i] += math.Float32frombits(uint32(h) << 16)
	}
}
