package memshare

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/gossip"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
)

// startGossip starts n encrypted members on loopback joined to the first.
func startGossip(t *testing.T, names ...string) []*gossip.Member {
	t.Helper()
	key := []byte("0123456789abcdef0123456789abcdef")
	var ms []*gossip.Member
	for _, name := range names {
		c := gossip.DefaultConfig(name)
		c.BindAddr, c.BindPort = "127.0.0.1", 0
		c.Keys = [][]byte{key}
		c.Probe.Disabled = true
		c.CoordInterval = 200 * time.Millisecond
		c.Logger = hclog.NewNullLogger()
		c.Tune = func(mc *memberlist.Config) {
			mc.GossipInterval = 50 * time.Millisecond
			mc.PushPullInterval = time.Second
			mc.ProbeInterval = 500 * time.Millisecond
			mc.ProbeTimeout = 400 * time.Millisecond
		}
		m, err := gossip.New(c)
		if err != nil {
			t.Fatalf("gossip member %s: %v", name, err)
		}
		t.Cleanup(func() { _ = m.Shutdown() })
		if len(ms) > 0 {
			if _, err := m.Join([]string{ms[0].Addr()}); err != nil {
				t.Fatalf("join %s: %v", name, err)
			}
		}
		ms = append(ms, m)
	}
	return ms
}

// waitDonors polls src until it lists exactly want (node names), or fails
// after a bounded wait.
func waitDonors(t *testing.T, src DonorSource, want ...string) []DonorInfo {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ds := src.Donors()
		var got []string
		for _, d := range ds {
			got = append(got, d.Node)
		}
		if slices.Equal(got, want) {
			return ds
		}
		if time.Now().After(deadline) {
			t.Fatalf("donors from gossip: got %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestGossipDonors(t *testing.T) {
	ms := startGossip(t, "a", "b", "c", "d")
	a, b, c, d := ms[0], ms[1], ms[2], ms[3]
	for _, m := range []*gossip.Member{a, b} {
		if err := Advertise(m, DonorInfo{Node: m.Name(), NBDAddr: "127.0.0.1:10809", APIAddr: "127.0.0.1:10810"}); err != nil {
			t.Fatal(err)
		}
	}
	// c claims to be b (would let two slabs of a stripe share a node).
	if err := c.SetSection(GossipSection, DonorInfo{Node: "b", NBDAddr: "127.0.0.1:1", APIAddr: "127.0.0.1:2"}); err != nil {
		t.Fatal(err)
	}
	// d publishes garbage.
	if err := d.SetSection(GossipSection, map[string]int{"node": 7}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	skipped := map[string]string{}
	src := NewGossipDonors(d)
	src.Skipped = func(node string, err error) {
		mu.Lock()
		skipped[node] = err.Error()
		mu.Unlock()
	}
	ds := waitDonors(t, src, "a", "b")
	if ds[0].NBDAddr != "127.0.0.1:10809" || ds[0].APIAddr != "127.0.0.1:10810" {
		t.Fatalf("addresses not carried: %+v", ds[0])
	}
	// a and b can reach d before c's false claim does: poll until both
	// bad entries were reported, within a bounded wait.
	reported := func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		ok := strings.Contains(skipped["c"], `node "b" published by member "c"`) && strings.Contains(skipped["d"], "memshare section")
		return ok, fmt.Sprint(skipped)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		src.Donors()
		ok, seen := reported()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bad entries not reported: %v", seen)
		}
	}

	if err := Withdraw(a); err != nil {
		t.Fatal(err)
	}
	waitDonors(t, src, "b")
	if err := b.Leave(time.Second); err != nil {
		t.Fatal(err)
	}
	waitDonors(t, src)
}

func TestAdvertiseValidates(t *testing.T) {
	bad := []DonorInfo{
		{NBDAddr: "127.0.0.1:1", APIAddr: "127.0.0.1:2"},
		{Node: "x", NBDAddr: "127.0.0.1", APIAddr: "127.0.0.1:2"},
		{Node: "x", NBDAddr: "127.0.0.1:1", APIAddr: ":2"},
		{Node: "x", NBDAddr: "0.0.0.0:10809", APIAddr: "127.0.0.1:2"},
		{Node: "x", NBDAddr: "127.0.0.1:99999", APIAddr: "127.0.0.1:2"},
	}
	for _, d := range bad {
		if err := Advertise(refuse{}, d); err == nil || errors.Is(err, errPublished) {
			t.Errorf("%+v: advertised, want a validation error", d)
		}
	}
}

var errPublished = errors.New("published")

type refuse struct{}

func (refuse) SetSection(string, any) error { return errPublished }

// FuzzParseAdvert: a gossip entry from any member is an error or a valid
// donor naming that member, never a crash.
func FuzzParseAdvert(f *testing.F) {
	f.Add("a", []byte(`{"node":"a","nbd_addr":"10.0.0.2:10809","api_addr":"10.0.0.2:10810"}`))
	f.Add("a", []byte(`{"node":"b","nbd_addr":"10.0.0.2:10809","api_addr":"10.0.0.2:10810"}`))
	f.Add("a", []byte(`{}`))
	f.Add("a", []byte(`{"node":"a","nbd_addr":"[::1]:1","api_addr":"x"}`))
	f.Add("a", []byte(`[1,2`))
	f.Fuzz(func(t *testing.T, node string, raw []byte) {
		d, err := parseAdvert(node, raw)
		if err != nil || d == (DonorInfo{}) {
			return
		}
		if d.Node != node || d.validate() != nil {
			t.Fatalf("accepted %+v from %q", d, node)
		}
	})
}
