package consumer

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/memshare/nbd"
)

// randomBatch returns up to 16 requests over disjoint block ranges (a
// batch's requests may run in any order, so none overlaps another):
// aligned single blocks (the fast path), unaligned, multi-block and
// stripe-crossing ones (the slow path).
func randomBatch(r *rand.Rand, size uint64, write bool) []*nbd.BatchRequest {
	var reqs []*nbd.BatchRequest
	used := map[uint64]bool{}
	for range 16 {
		off, n := r.Uint64N(size/BlockSize)*BlockSize, uint64(BlockSize)
		switch r.IntN(4) {
		case 1:
			off += uint64(r.IntN(100))
			n = 1 + r.Uint64N(2*BlockSize)
		case 2:
			n = 3 * BlockSize
		}
		if off+n > size {
			continue
		}
		b0, b1 := off/BlockSize, (off+n+BlockSize-1)/BlockSize
		clash := false
		for b := b0; b < b1; b++ {
			clash = clash || used[b]
		}
		if clash {
			continue
		}
		for b := b0; b < b1; b++ {
			used[b] = true
		}
		br := &nbd.BatchRequest{Write: write, Off: off, Data: make([]byte, n)}
		if write {
			br.Data = randBytes(r, int(n))
		}
		reqs = append(reqs, br)
	}
	return reqs
}

func TestBatchMatchesModel(t *testing.T) {
	forLayouts(t, func(t *testing.T, layout string) {
		c := startCluster(t, 7, 8<<20)
		v := openVolume(t, c, Config{Size: 8 << 20, Layout: layout})
		m := &model{buf: make([]byte, v.Size())}
		r := rand.New(rand.NewPCG(3, 4))
		fastSeen := 0
		for i := range 60 {
			reqs := randomBatch(r, v.Size(), i%2 == 0)
			fast, _ := v.partition(reqs)
			fastSeen += len(fast)
			v.DoBatch(reqs)
			for _, q := range reqs {
				if q.Err != nil {
					t.Fatalf("batch request at %d+%d: %v", q.Off, len(q.Data), q.Err)
				}
				if q.Write {
					m.write(q.Data, q.Off)
				} else if !bytes.Equal(q.Data, m.buf[q.Off:q.Off+uint64(len(q.Data))]) {
					t.Fatalf("batch read at %d+%d differs from what was written", q.Off, len(q.Data))
				}
			}
		}
		if fastSeen == 0 {
			t.Fatalf("%s layout: no request took the batched path", layout)
		}
		m.verify(t, v)
	})
}

// TestBatchKillRDonors: batched writes (the corked fast path) while r = 2
// donors die lose no acknowledged byte, on both layouts.
func TestBatchKillRDonors(t *testing.T) {
	forLayouts(t, testBatchKillRDonors)
}

func testBatchKillRDonors(t *testing.T, layout string) {
	c := startCluster(t, 9, 8<<20)
	v := openVolume(t, c, Config{Size: 8 << 20, Layout: layout})
	m := &model{buf: make([]byte, v.Size())}
	var stop atomic.Bool
	var acked atomic.Int64
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 5))
			for i := 0; !stop.Load() && i < 3000; i++ {
				// Writer w owns blocks ≡ w (mod 2): the model is exact.
				var reqs []*nbd.BatchRequest
				seen := map[uint64]bool{}
				for range 8 {
					blk := uint64(r.IntN(int(v.Size()/BlockSize)/2)*2 + w)
					if !seen[blk] {
						seen[blk] = true
						reqs = append(reqs, &nbd.BatchRequest{Write: true, Off: blk * BlockSize, Data: randBytes(r, BlockSize)})
					}
				}
				v.DoBatch(reqs)
				for _, q := range reqs {
					if q.Err != nil {
						t.Errorf("batched write with at most r donors down: %v", q.Err)
						return
					}
					m.write(q.Data, q.Off)
					acked.Add(1)
				}
			}
		}()
	}
	waitFor(t, 10*time.Second, "writes before the kill", func() bool { return acked.Load() > 200 })
	victims := v.nodesOf(0)[:2]
	for _, d := range c.donors {
		if n := d.Info().Node; n == victims[0] || n == victims[1] {
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
}
