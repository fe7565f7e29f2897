package consumer

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/memshare/nbd"
)

func TestRoundTripUnaligned(t *testing.T) {
	forLayouts(t, func(t *testing.T, layout string) {
		c := startCluster(t, 7, 8<<20)
		v := openVolume(t, c, Config{Size: 10 << 20, Layout: layout})
		m := &model{buf: make([]byte, v.Size())}
		r := rand.New(rand.NewPCG(1, 2))
		for range 200 {
			n := 1 + r.IntN(3*BlockSize)
			off := r.Uint64N(v.Size() - uint64(n))
			p := randBytes(r, n)
			if err := v.WriteAt(p, off, false); err != nil {
				t.Fatal(err)
			}
			m.write(p, off)
		}
		// A write across the stripe boundary (4 MiB with k=4 and 1 MiB slabs).
		p := randBytes(r, 3*BlockSize+17)
		off := uint64(4<<20) - 5000
		if err := v.WriteAt(p, off, false); err != nil {
			t.Fatal(err)
		}
		m.write(p, off)
		m.verify(t, v)
	})
}

func TestPlacementNeverSharesANode(t *testing.T) {
	c := startCluster(t, 8, 8<<20)
	v := openVolume(t, c, Config{Size: 16 << 20})
	for i := range v.stripes {
		seen := map[string]bool{}
		for _, n := range v.nodesOf(i) {
			if seen[n] {
				t.Fatalf("stripe %d has two slabs on %s", i, n)
			}
			seen[n] = true
		}
	}
	c2 := startCluster(t, 5, 64<<20)
	cfg := Config{ID: "x", Size: 1 << 20, Key: testKey, SlabSize: testSlab, Donors: c2.view}
	if _, err := Open(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "distinct nodes") {
		t.Fatalf("4+2 on 5 nodes must be refused: %v", err)
	}
}

// Writers run while r donors die: every acknowledged byte reads back, and
// after the rebuild r more can die.
func TestKillRDonorsMidWrite(t *testing.T) {
	forLayouts(t, func(t *testing.T, layout string) {
		c := startCluster(t, 9, 8<<20)
		v := openVolume(t, c, Config{Size: 8 << 20, Layout: layout})
		m := &model{buf: make([]byte, v.Size())}
		var stop atomic.Bool
		var wg sync.WaitGroup
		var acked atomic.Int64
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), 9))
				// Each writer owns its own blocks, so the model is exact.
				for i := 0; !stop.Load() && i < 5000; i++ {
					blk := uint64(r.IntN(int(v.Size()/BlockSize)/4)*4 + w)
					p := randBytes(r, BlockSize)
					if err := v.WriteAt(p, blk*BlockSize, false); err != nil {
						t.Errorf("write with at most r donors down: %v", err)
						return
					}
					m.write(p, blk*BlockSize)
					acked.Add(1)
				}
			}()
		}
		waitFor(t, 10*time.Second, "writes before the kill", func() bool { return acked.Load() > 200 })
		victims := v.nodesOf(0)[:2] // r = 2 donors holding stripe 0
		for _, d := range c.donors {
			if d.Info().Node == victims[0] || d.Info().Node == victims[1] {
				d.Close()
			}
		}
		before := acked.Load()
		waitFor(t, 10*time.Second, "writes after the kill", func() bool { return acked.Load() > before+200 })
		stop.Store(true)
		wg.Wait()
		m.verify(t, v)
		waitFor(t, 30*time.Second, "slabs re-homed", v.healthy)
		m.verify(t, v)
		// Redundancy is back: two more donors may go. (Named before the
		// first dies: a slab re-homed in between must not make a third.)
		killed := 0
		more := v.nodesOf(1)[2:4]
		for _, d := range c.donors {
			for _, n := range more {
				if d.Info().Node == n {
					d.Close()
					killed++
				}
			}
		}
		m.verify(t, v)
		t.Logf("%d writes acknowledged, %d more donors killed after the rebuild", acked.Load(), killed)
	})
}

// With r+1 donors of a stripe gone (and no spare to rebuild on) reads fail
// with an I/O error and never return wrong data.
func TestKillRPlusOneGivesIOError(t *testing.T) {
	forLayouts(t, func(t *testing.T, layout string) {
		c := startCluster(t, 6, 8<<20)
		v := openVolume(t, c, Config{Size: 4 << 20, Layout: layout})
		m := &model{buf: make([]byte, v.Size())}
		r := rand.New(rand.NewPCG(3, 4))
		p := randBytes(r, int(v.Size()))
		if err := v.WriteAt(p, 0, false); err != nil {
			t.Fatal(err)
		}
		m.write(p, 0)
		for _, d := range c.donors[:3] {
			d.Close()
		}
		waitFor(t, 10*time.Second, "three dead slabs", func() bool {
			cur, _, _ := v.stripes[0].snapshot()
			dead := 0
			for _, sh := range cur {
				if sh == nil {
					dead++
				}
			}
			return dead >= 3
		})
		failed := 0
		for off := uint64(0); off < v.Size(); off += 64 << 10 {
			got := make([]byte, 64<<10)
			err := v.ReadAt(got, off)
			var ne *nbd.Error
			if err == nil {
				if string(got) != string(m.buf[off:off+64<<10]) {
					t.Fatalf("wrong data at %d with r+1 donors gone", off)
				}
				continue
			}
			if !errors.As(err, &ne) || ne.Errno != nbd.EIO {
				t.Fatalf("want an EIO error, got %v", err)
			}
			failed++
		}
		if failed == 0 {
			t.Fatal("every stripe lost 3 of 6 slabs, yet no read failed")
		}
		if err := v.WriteAt(make([]byte, BlockSize), 0, false); err == nil {
			t.Fatal("a write to a lost stripe must fail")
		}
	})
}

// Backup mode: a dead donor's data comes from the local file.
func TestBackupModeSurvivesDonorLoss(t *testing.T) {
	c := startCluster(t, 2, 8<<20)
	v := openVolume(t, c, Config{Size: 2 << 20, Mode: ModeBackup, BackupPath: t.TempDir() + "/backup"})
	m := &model{buf: make([]byte, v.Size())}
	r := rand.New(rand.NewPCG(5, 6))
	p := randBytes(r, int(v.Size()))
	if err := v.WriteAt(p, 0, false); err != nil {
		t.Fatal(err)
	}
	m.write(p, 0)
	node := v.nodesOf(0)[0]
	for _, d := range c.donors {
		if d.Info().Node == node {
			d.Close()
		}
	}
	m.verify(t, v)
	waitFor(t, 20*time.Second, "backup-mode slab re-homed", v.healthy)
	if v.nodesOf(0)[0] == node {
		t.Fatal("slab not moved")
	}
	m.verify(t, v)
}

// A donor whose own task grows reclaims: its slabs move away first, and no
// consumer data is lost.
func TestDonorReclaimMovesSlabs(t *testing.T) {
	forLayouts(t, func(t *testing.T, layout string) {
		c := startCluster(t, 8, 8<<20)
		v := openVolume(t, c, Config{Size: 4 << 20, RenewInterval: time.Hour, Layout: layout})
		m := &model{buf: make([]byte, v.Size())}
		r := rand.New(rand.NewPCG(7, 8))
		p := randBytes(r, int(v.Size()))
		if err := v.WriteAt(p, 0, false); err != nil {
			t.Fatal(err)
		}
		m.write(p, 0)
		node := v.nodesOf(0)[0]
		idx := c.donorOn(node)
		d0 := c.donors[idx]
		c.caps[idx].Store(0) // the donor task grew back
		d0.Sweep()
		if st := d0.Status(); st.Accepting {
			t.Fatal("donor should stop granting")
		}
		v.RenewNow() // learns the lease is reclaiming
		waitFor(t, 20*time.Second, "reclaimed slab moved", func() bool {
			return v.healthy() && !slices.Contains(v.nodesOf(0), node)
		})
		waitFor(t, 5*time.Second, "donor memory returned", func() bool { return d0.Status().Used == 0 })
		m.verify(t, v)
	})
}

// forLayouts runs a test on both stripe layouts.
func forLayouts(t *testing.T, fn func(t *testing.T, layout string)) {
	for _, l := range []string{LayoutSplit, LayoutWhole} {
		t.Run(l, func(t *testing.T) { fn(t, l) })
	}
}
