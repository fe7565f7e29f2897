package donor

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/nbd"
)

var testKey = []byte("0123456789abcdef-test-key")

// startDonor runs a donor on loopback until the test ends.
func startDonor(t *testing.T, cfg Config) *Donor {
	t.Helper()
	if cfg.Key == nil {
		cfg.Key = testKey
	}
	if cfg.Node == "" {
		cfg.Node = "n1"
	}
	if cfg.SlabSize == 0 {
		cfg.SlabSize = 1 << 20
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nl, _ := net.Listen("tcp", "127.0.0.1:0")
	al, _ := net.Listen("tcp", "127.0.0.1:0")
	d.Start(nl, al)
	t.Cleanup(func() { d.Close() })
	return d
}

func TestLeaseServeAndRelease(t *testing.T) {
	d := startDonor(t, Config{CapacityBytes: 2 << 20})
	api := memshare.NewAPIClient(d.Info().APIAddr, testKey, nil)
	ctx := context.Background()
	l, err := api.Grant(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := nbd.Dial(ctx, "tcp", d.Info().NBDAddr, nbd.ClientOptions{Export: l.Token})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Size() != 1<<20 {
		t.Fatalf("slab size %d", c.Size())
	}
	want := bytes.Repeat([]byte("slab"), 1024)
	if err := c.WriteAt(want, 4096); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	if err := c.ReadAt(got, 4096); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back: %v", err)
	}
	if _, err := api.Grant(ctx, "c2"); err != nil {
		t.Fatal(err)
	}
	var ae *memshare.APIError
	if _, err := api.Grant(ctx, "c3"); !errors.As(err, &ae) || ae.Status != 503 {
		t.Fatalf("grant beyond capacity: %v", err)
	}
	if err := api.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	if err := c.ReadAt(got, 0); err == nil {
		t.Fatal("I/O on a released slab must fail")
	}
	if st := d.Status(); st.Used != 1<<20 {
		t.Fatalf("used after release: %d", st.Used)
	}
}

func TestTokensRefused(t *testing.T) {
	d := startDonor(t, Config{CapacityBytes: 4 << 20})
	ctx := context.Background()
	api := memshare.NewAPIClient(d.Info().APIAddr, testKey, nil)
	l, err := api.Grant(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	forged := l.Token[:len(l.Token)-2] + "AA"
	other, _ := memshare.NewSigner([]byte("another-cluster-key!"))
	signer, _ := memshare.NewSigner(testKey)
	cases := map[string]string{
		"forged signature":    forged,
		"other cluster's key": other.Sign(memshare.Token{LeaseID: l.ID, Expires: time.Now().Add(time.Hour)}),
		"expired":             signer.Sign(memshare.Token{LeaseID: l.ID, Expires: time.Now().Add(-time.Second)}),
		"unknown lease":       signer.Sign(memshare.Token{LeaseID: "abcdef", Expires: time.Now().Add(time.Hour)}),
		"garbage":             "../../etc/passwd",
	}
	for name, tok := range cases {
		_, err := nbd.Dial(ctx, "tcp", d.Info().NBDAddr, nbd.ClientOptions{Export: tok})
		if err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s: want refusal, got %v", name, err)
		}
	}
	bad := memshare.NewAPIClient(d.Info().APIAddr, []byte("wrong-key-wrong-key"), nil)
	var ae *memshare.APIError
	if _, err := bad.Grant(ctx, "x"); !errors.As(err, &ae) || ae.Status != 401 {
		t.Fatalf("API with a wrong key: %v", err)
	}
}

func TestUnrenewedLeaseExpires(t *testing.T) {
	d := startDonor(t, Config{CapacityBytes: 4 << 20, LeaseTTL: time.Minute, SweepInterval: time.Hour})
	api := memshare.NewAPIClient(d.Info().APIAddr, testKey, nil)
	ctx := context.Background()
	l, err := api.Grant(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := nbd.Dial(ctx, "tcp", d.Info().NBDAddr, nbd.ClientOptions{Export: l.Token})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d.store.sweep(time.Now().Add(2 * time.Minute))
	if st := d.Status(); st.Used != 0 {
		t.Fatalf("expired lease still holds %d bytes", st.Used)
	}
	var ne *nbd.Error
	if err := c.ReadAt(make([]byte, 16), 0); !errors.As(err, &ne) || ne.Errno != nbd.ESHUTDOWN {
		t.Fatalf("I/O after expiry: %v", err)
	}
	if _, err := api.Renew(ctx, l.ID); err == nil {
		t.Fatal("renewing an expired lease must fail")
	}
}

func TestReclaimStopsLeasesThenFrees(t *testing.T) {
	var capacity atomic.Int64
	capacity.Store(3 << 20)
	d := startDonor(t, Config{Capacity: capacity.Load, LeaseTTL: time.Hour, ReclaimGrace: time.Minute, SweepInterval: time.Hour})
	api := memshare.NewAPIClient(d.Info().APIAddr, testKey, nil)
	ctx := context.Background()
	l1, _ := api.Grant(ctx, "c")
	l2, err := api.Grant(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	capacity.Store(1 << 20) // the donor task grew
	now := time.Now()
	d.store.sweep(now)
	if st := d.Status(); st.Accepting {
		t.Fatal("a donor short of memory must stop granting")
	}
	if _, err := api.Grant(ctx, "c"); err == nil {
		t.Fatal("grant while reclaiming")
	}
	r2, _ := api.Renew(ctx, l2.ID)
	r1, _ := api.Renew(ctx, l1.ID)
	if r2.State != memshare.LeaseReclaiming || r1.State != memshare.LeaseActive {
		t.Fatalf("newest lease should be reclaimed first: l1 %s, l2 %s", r1.State, r2.State)
	}
	d.store.sweep(now.Add(2 * time.Minute))
	if st := d.Status(); st.Used != 1<<20 {
		t.Fatalf("after the grace the donor still lends %d bytes over its capacity", st.Used)
	}
}
