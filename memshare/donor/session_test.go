package donor

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/nbd"
)

// TestSessionReachesOnlyItsConsumersSlabs: one connection with a session
// token reaches every slab its consumer leases, at the lease's base, and
// nothing else: another consumer's slab, a range past a slab's end, a
// released slab and a forged token are all refused.
func TestSessionReachesOnlyItsConsumersSlabs(t *testing.T) {
	d := startDonor(t, Config{CapacityBytes: 4 << 20})
	api := memshare.NewAPIClient(d.Info().APIAddr, testKey, nil)
	ctx := context.Background()
	var mine []memshare.Lease
	for range 2 {
		l, err := api.Grant(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, l)
	}
	other, err := api.Grant(ctx, "c2")
	if err != nil {
		t.Fatal(err)
	}
	if mine[0].Session == "" || mine[0].SessionBase == mine[1].SessionBase {
		t.Fatalf("leases without distinct session bases: %+v", mine)
	}
	c, err := nbd.Dial(ctx, "tcp", d.Info().NBDAddr, nbd.ClientOptions{Export: mine[1].Session})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, l := range mine {
		want := bytes.Repeat([]byte{byte('a' + i)}, 4096)
		if err := c.WriteAt(want, l.SessionBase+8192); err != nil {
			t.Fatal(err)
		}
		// The same bytes through the slab's own export.
		sc, err := nbd.Dial(ctx, "tcp", d.Info().NBDAddr, nbd.ClientOptions{Export: l.Token})
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 4096)
		err = sc.ReadAt(got, 8192)
		sc.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("slab %d through its own export: %v", i, err)
		}
	}
	buf := make([]byte, 4096)
	if err := c.ReadAt(buf, other.SessionBase); !isErrno(err, nbd.ESHUTDOWN) {
		t.Fatalf("another consumer's slab: %v", err)
	}
	if err := c.ReadAt(buf, mine[0].SessionBase+(1<<20)-2048); !isErrno(err, nbd.EINVAL) {
		t.Fatalf("read across a slab's end: %v", err)
	}
	if err := api.Release(ctx, mine[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := c.ReadAt(buf, mine[0].SessionBase); !isErrno(err, nbd.ESHUTDOWN) {
		t.Fatalf("released slab: %v", err)
	}
	if err := c.ReadAt(buf, mine[1].SessionBase+8192); err != nil || buf[0] != 'b' {
		t.Fatalf("the other slab after a release: %v", err)
	}
	forged := strings.Replace(mine[1].Session, memshare.SessionID("c1"), memshare.SessionID("c2"), 1)
	if _, err := nbd.Dial(ctx, "tcp", d.Info().NBDAddr, nbd.ClientOptions{Export: forged}); err == nil {
		t.Fatal("forged session token accepted")
	}
}

func isErrno(err error, errno uint32) bool {
	var ne *nbd.Error
	return errors.As(err, &ne) && ne.Errno == errno
}
