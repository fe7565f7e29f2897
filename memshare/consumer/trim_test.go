package consumer

import (
	"math/rand/v2"
	"testing"
)

// TestTrimZeroesAndSurvivesDonorLoss: TRIM in the split layout zeroes the
// whole blocks of its range on every slab (parity included), leaves the
// rest alone, and the stripe still decodes after r donors die.
func TestTrimZeroesAndSurvivesDonorLoss(t *testing.T) {
	forLayouts(t, func(t *testing.T, layout string) {
		c := startCluster(t, 7, 8<<20)
		v := openVolume(t, c, Config{Size: 8 << 20, Layout: layout})
		m := &model{buf: make([]byte, v.Size())}
		r := rand.New(rand.NewPCG(5, 6))
		p := randBytes(r, int(v.Size()))
		if err := v.WriteAt(p, 0, false); err != nil {
			t.Fatal(err)
		}
		m.write(p, 0)
		// Unaligned, crossing the 4 MiB stripe boundary: only whole
		// blocks inside are trimmed.
		off, n := uint64(4<<20)-3*BlockSize-100, uint32(7*BlockSize)
		if err := v.Trim(off, n); err != nil {
			t.Fatal(err)
		}
		if layout == LayoutSplit {
			first, end := (off+BlockSize-1)/BlockSize*BlockSize, (off+uint64(n))/BlockSize*BlockSize
			m.write(make([]byte, end-first), first)
		}
		m.verify(t, v)
		for _, node := range v.nodesOf(0)[:2] {
			c.donors[c.donorOn(node)].Close()
		}
		m.verify(t, v)
	})
}
