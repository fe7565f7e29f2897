package consumer

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// reopenSaved round-trips a snapshot through JSON (as the driver saves it)
// and re-opens it as another process would.
func reopenSaved(t *testing.T, c *cluster, v *Volume, cfg Config) *Volume {
	t.Helper()
	b, err := json.Marshal(v.Snapshot().Layout)
	if err != nil {
		t.Fatal(err)
	}
	v.Abandon()
	var l Layout
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	cfg.ID, cfg.Key, cfg.SlabSize, cfg.Donors = "test-consumer", testKey, testSlab, c.view
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nv, err := Reopen(ctx, cfg, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nv.Close() })
	return nv
}

// A volume abandoned by its process and re-opened from its saved layout
// reaches the same leases and reads back every byte; nothing is rebuilt.
func TestReopenSameLeases(t *testing.T) {
	c := startCluster(t, 4, 16<<20)
	cfg := Config{Size: 5 << 20, DataShards: 2, ParityShards: 1}
	v := openVolume(t, c, cfg)
	m := &model{buf: make([]byte, cfg.Size)}
	r := rand.New(rand.NewPCG(1, 2))
	data := randBytes(r, int(cfg.Size)-1000)
	if err := v.WriteAt(data, 777, false); err != nil {
		t.Fatal(err)
	}
	m.write(data, 777)
	used := c.usedTotal(t)
	nv := reopenSaved(t, c, v, cfg)
	m.verify(t, nv)
	if !nv.healthy() {
		t.Fatal("a re-opened volume whose leases all lived must have every slab live")
	}
	if got := c.usedTotal(t); got != used {
		t.Fatalf("donors lend %d bytes after the re-open, %d before: leases were not the same", got, used)
	}
	more := randBytes(r, 64<<10)
	if err := nv.WriteAt(more, 3<<20, false); err != nil {
		t.Fatal(err)
	}
	m.write(more, 3<<20)
	m.verify(t, nv)
}

// A slab whose donor died while no process held the volume is rebuilt
// from parity after the re-open, with no byte lost; a slab saved dead is
// never read.
func TestReopenRebuildsLostAndDeadSlabs(t *testing.T) {
	c := startCluster(t, 5, 16<<20)
	cfg := Config{Size: 4 << 20, DataShards: 2, ParityShards: 1}
	v := openVolume(t, c, cfg)
	m := &model{buf: make([]byte, cfg.Size)}
	data := randBytes(rand.New(rand.NewPCG(3, 4)), int(cfg.Size))
	if err := v.WriteAt(data, 0, false); err != nil {
		t.Fatal(err)
	}
	m.write(data, 0)
	snap := v.Snapshot()
	if v.Changed(snap, 0, cfg.Size) {
		t.Fatal("nothing changed since the snapshot")
	}
	// Stripe 1's slot 0 misses a write: it is dead, and must be saved so.
	st := v.stripes[1]
	v.markDead(st, 0, st.slots[0].cur, errTest)
	if !v.Changed(snap, 2<<20, 4096) || v.Changed(snap, 0, 4096) {
		t.Fatal("Changed must report the dead slot's stripe, and only it")
	}
	c.donors[c.donorOn(outside(v.nodesOf(0), v.nodesOf(1)[1:]))].Close() // stripe 0 loses a slab
	nv := reopenSaved(t, c, v, cfg)
	m.verify(t, nv)
	waitFor(t, 20*time.Second, "both slabs re-homed", nv.healthy)
	m.verify(t, nv)
}

// outside returns a node of a that b does not hold.
func outside(a, b []string) string {
	for _, n := range a {
		if !slices.Contains(b, n) {
			return n
		}
	}
	return ""
}

var errTest = &testError{}

type testError struct{}

func (*testError) Error() string { return "test: slab missed a write" }

// A layout that does not fit the config is refused with the field named.
func TestReopenRefusesMismatchedLayout(t *testing.T) {
	c := startCluster(t, 3, 16<<20)
	cfg := Config{Size: 1 << 20, DataShards: 2, ParityShards: 1}
	v := openVolume(t, c, cfg)
	l := v.Snapshot().Layout
	cfg.ID, cfg.Key, cfg.SlabSize, cfg.Donors = "test-consumer", testKey, testSlab, c.view
	for name, edit := range map[string]func(*Layout){
		"version": func(l *Layout) { l.Version = 99 },
		"size":    func(l *Layout) { l.Size = 8 << 20 },
		"stripes": func(l *Layout) { l.Stripes = append(l.Stripes, l.Stripes[0]) },
		"lease":   func(l *Layout) { l.Stripes[0].Slots[1].Lease = "" },
	} {
		bad := l
		bad.Stripes = append([]Stripe(nil), l.Stripes...)
		bad.Stripes[0].Slots = append([]Slab(nil), l.Stripes[0].Slots...)
		edit(&bad)
		if _, err := Reopen(context.Background(), cfg, bad); err == nil {
			t.Errorf("%s: a mismatched layout was accepted", name)
		}
	}
}

func (c *cluster) usedTotal(t *testing.T) int64 {
	t.Helper()
	var sum int64
	for _, d := range c.donors {
		sum += d.Status().Used
	}
	return sum
}

// BenchmarkChanged is what the driver adds to every write to keep its
// saved layout safe: one check of the touched stripe.
func BenchmarkChanged(b *testing.B) {
	c := startCluster(b, 6, 64<<20)
	v := openVolume(b, c, Config{Size: 32 << 20})
	s := v.Snapshot()
	b.ResetTimer()
	for i := range b.N {
		if v.Changed(s, uint64(i%8192)*4096, 4096) {
			b.Fatal("nothing changed")
		}
	}
}
