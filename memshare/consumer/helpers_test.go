package consumer

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/donor"
)

var testKey = []byte("consumer-test-key-0123456789")

const testSlab = 1 << 20

// cluster is a set of in-process donors on loopback.
type cluster struct {
	donors []*donor.Donor
	caps   []*atomic.Int64 // each donor's donatable bytes
	view   *memshare.StaticDonors
}

func startCluster(t testing.TB, n int, capacity int64) *cluster {
	t.Helper()
	return startClusterSlab(t, n, capacity, testSlab)
}

// startClusterSlab starts n donors lending slab-sized slabs.
func startClusterSlab(t testing.TB, n int, capacity int64, slab uint64) *cluster {
	t.Helper()
	c := &cluster{}
	var infos []memshare.DonorInfo
	for i := range n {
		cp := &atomic.Int64{}
		cp.Store(capacity)
		c.caps = append(c.caps, cp)
		d, err := donor.New(donor.Config{Node: fmt.Sprintf("node%d", i), Key: testKey, SlabSize: slab, Capacity: cp.Load, SweepInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		nl, _ := net.Listen("tcp", "127.0.0.1:0")
		al, _ := net.Listen("tcp", "127.0.0.1:0")
		d.Start(nl, al)
		t.Cleanup(func() { d.Close() })
		c.donors = append(c.donors, d)
		infos = append(infos, d.Info())
	}
	c.view, _ = memshare.NewStaticDonors(infos)
	return c
}

func openVolume(t testing.TB, c *cluster, cfg Config) *Volume {
	t.Helper()
	cfg.ID = "test-consumer"
	cfg.Key = testKey
	if cfg.SlabSize == 0 {
		cfg.SlabSize = testSlab
	}
	cfg.Donors = c.view
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	v, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// model is the expected content of a volume, updated only by acknowledged
// writes.
type model struct {
	mu  sync.Mutex
	buf []byte
}

func (m *model) write(p []byte, off uint64) {
	m.mu.Lock()
	copy(m.buf[off:], p)
	m.mu.Unlock()
}

// verify reads the whole volume and compares it with the model.
func (m *model) verify(t testing.TB, v *Volume) {
	t.Helper()
	got := make([]byte, len(m.buf))
	if err := v.ReadAt(got, 0); err != nil {
		t.Fatalf("reading the volume back: %v", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !bytes.Equal(got, m.buf) {
		for i := range got {
			if got[i] != m.buf[i] {
				t.Fatalf("data differs first at byte %d", i)
			}
		}
	}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// healthy reports whether every slot has a live slab and no rebuild runs.
func (v *Volume) healthy() bool {
	for _, st := range v.stripes {
		st.mu.Lock()
		for _, s := range st.slots {
			if s.dead || s.next != nil || s.queued || s.lost {
				st.mu.Unlock()
				return false
			}
		}
		st.mu.Unlock()
	}
	return true
}

// donorOn returns the index of the donor on node.
func (c *cluster) donorOn(node string) int {
	for i, d := range c.donors {
		if d.Info().Node == node {
			return i
		}
	}
	return -1
}

// nodesOf returns the donor nodes holding stripe i.
func (v *Volume) nodesOf(i int) []string {
	st := v.stripes[i]
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []string
	for _, s := range st.slots {
		out = append(out, s.cur.donor.Node)
	}
	return out
}
