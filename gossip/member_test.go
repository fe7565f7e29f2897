package gossip

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

func resFor(i int) Resources {
	return Resources{
		MemTotalBytes: 64 << 30, MemUsedBytes: uint64(i) << 30, MemDonatableBytes: uint64(i+1) << 28,
		GPUs: []GPU{{Index: 0, TotalMiB: 81920, UsedFraction: 0.25, UsedMiB: uint64(1000 + i)}},
	}
}

// viewMatches reports whether m sees exactly want's nodes with their
// resources.
func viewMatches(m *Member, want map[string]Resources) bool {
	v := m.View()
	seen := 0
	for _, n := range v.Nodes {
		w, ok := want[n.Name]
		if !ok {
			return false
		}
		if !n.HasRes || n.Resources.MemDonatableBytes != w.MemDonatableBytes || n.Resources.MemUsedBytes != w.MemUsedBytes {
			return false
		}
		seen++
	}
	return seen == len(want)
}

func TestMembersConvergeOnOneView(t *testing.T) {
	ms := startCluster(t, 10, nil)
	want := map[string]Resources{}
	for i, m := range ms {
		r := resFor(i)
		if err := m.SetResources(r); err != nil {
			t.Fatal(err)
		}
		want[m.Name()] = r
	}
	waitFor(t, "every member to see every resource record", 20*time.Second, func() bool {
		for _, m := range ms {
			if !viewMatches(m, want) {
				return false
			}
		}
		return true
	})
	// A change made later reaches everyone too (broadcast, not only join).
	r := resFor(42)
	if err := ms[3].SetResources(r); err != nil {
		t.Fatal(err)
	}
	want[ms[3].Name()] = r
	waitFor(t, "a later change to reach every member", 20*time.Second, func() bool {
		for _, m := range ms {
			if !viewMatches(m, want) {
				return false
			}
		}
		return true
	})
	// Coordinates spread as well, so any member can estimate any RTT.
	waitFor(t, "coordinates from every member", 20*time.Second, func() bool {
		_, ok := ms[0].View().RTT(ms[5].Name(), ms[7].Name())
		return ok
	})
}

func TestDeadMemberLeavesTheView(t *testing.T) {
	ms := startCluster(t, 4, func(c *Config) { c.Tune = fastTune })
	want := map[string]Resources{}
	for i, m := range ms {
		r := resFor(i)
		_ = m.SetResources(r)
		want[m.Name()] = r
	}
	waitFor(t, "convergence", 20*time.Second, func() bool { return viewMatches(ms[0], want) && viewMatches(ms[1], want) })
	donatable := func(m *Member) (sum uint64) {
		for _, n := range m.View().Nodes {
			sum += n.Resources.MemDonatableBytes
		}
		return sum
	}
	before := donatable(ms[0])
	victim := ms[2]
	// Kill without a leave message: peers must detect the failure.
	if err := victim.Shutdown(); err != nil {
		t.Fatal(err)
	}
	delete(want, victim.Name())
	for _, m := range []*Member{ms[0], ms[1], ms[3]} {
		waitFor(t, m.Name()+" to drop the dead member", 30*time.Second, func() bool { return viewMatches(m, want) })
	}
	after := donatable(ms[0])
	if before-after != resFor(2).MemDonatableBytes {
		t.Fatalf("donatable memory went %d → %d, want a drop of %d", before, after, resFor(2).MemDonatableBytes)
	}
}

func TestWrongKeyAndPlaintextRefused(t *testing.T) {
	a := startMember(t, testConfig("a", testKey))
	wrong := testConfig("wrong", []byte("fedcba9876543210fedcba9876543210"))
	b := startMember(t, wrong)
	if n, err := b.Join([]string{a.Addr()}); err == nil {
		t.Fatalf("wrong-key member joined (%d contacted)", n)
	}
	plain := testConfig("plain")
	plain.AllowInsecure = true
	c := startMember(t, plain)
	if n, err := c.Join([]string{a.Addr()}); err == nil {
		t.Fatalf("unencrypted member joined (%d contacted)", n)
	}
	// Give stray UDP packets time to arrive; a must still be alone.
	time.Sleep(500 * time.Millisecond)
	if got := a.numMembers(); got != 1 {
		t.Fatalf("member a has %d members, want 1 (intruders refused)", got)
	}
}

func TestConfigRequiresKey(t *testing.T) {
	c := testConfig("nokey")
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), "encryption key") {
		t.Fatalf("New without a key: %v, want an error naming the encryption key", err)
	}
	c.Keys = [][]byte{[]byte("short")}
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), "encryption key 0") {
		t.Fatalf("New with a 5-byte key: %v", err)
	}
}

func TestKeyRotation(t *testing.T) {
	k2 := []byte("rotated-key-0123rotated-key-0123")
	ms := startCluster(t, 3, nil)
	// Step 1: every member learns the new key as secondary.
	for _, m := range ms {
		if err := m.SetKeys([][]byte{testKey, k2}); err != nil {
			t.Fatal(err)
		}
	}
	// Step 2: every member encrypts with it. Step 3: the old one goes.
	for _, m := range ms {
		_ = m.SetKeys([][]byte{k2, testKey})
	}
	for _, m := range ms {
		_ = m.SetKeys([][]byte{k2})
	}
	r := resFor(7)
	_ = ms[1].SetResources(r)
	waitFor(t, "gossip under the rotated key", 20*time.Second, func() bool {
		n, ok := ms[2].View().Node(ms[1].Name())
		return ok && n.Resources.MemDonatableBytes == r.MemDonatableBytes
	})
	// A member with only the retired key is now refused.
	old := startMember(t, testConfig("old", testKey))
	if _, err := old.Join([]string{ms[0].Addr()}); err == nil {
		t.Fatal("member with the retired key joined")
	}
}

func TestBadMessagesDroppedMemberKeepsRunning(t *testing.T) {
	logs := &syncBuf{}
	ms := startCluster(t, 2, func(c *Config) {
		c.MaxMessageBytes = 64 << 10
		c.Logger = hclog.New(&hclog.LoggerOptions{Name: c.Name, Level: hclog.Warn, Output: logs})
	})
	target := ms[0].ml.LocalNode()
	valid, _ := encode(kindUpdate, []Record{{Node: "x", Sections: map[string]Section{"res": {Version: 1, Data: []byte(`{"mt":1}`)}}}})
	bad := map[string][]byte{
		"corrupt":   []byte("\x00\xff{not json"),
		"truncated": valid[:len(valid)/2],
		"oversized": []byte(`{"schema":1,"kind":"update","recs":[],"pad":"` + strings.Repeat("A", 70<<10) + `"}`),
		"bad field": []byte(`{"schema":1,"kind":"update","recs":[{"n":"","s":{}}]}`),
	}
	for name, msg := range bad {
		if err := ms[1].ml.SendReliable(target, msg); err != nil {
			t.Fatalf("sending %s message: %v", name, err)
		}
	}
	waitFor(t, "four drop log lines", 10*time.Second, func() bool {
		return strings.Count(logs.String(), "dropping gossip message") >= 4
	})
	for _, want := range []string{"exceeds the limit", "malformed message", "recs[0]: n: node name"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	if _, ok := ms[0].View().Node("x"); ok {
		t.Fatal("a record from a dropped message reached the view")
	}
	// Still working: a real update arrives.
	r := resFor(3)
	_ = ms[1].SetResources(r)
	waitFor(t, "an update after the bad messages", 10*time.Second, func() bool {
		n, ok := ms[0].View().Node(ms[1].Name())
		return ok && n.Resources.MemUsedBytes == r.MemUsedBytes
	})
}

func TestObserverSharesNothingAndSeesAll(t *testing.T) {
	ms := startCluster(t, 3, nil)
	for i, m := range ms {
		_ = m.SetResources(resFor(i))
	}
	oc := testConfig("scheduler", testKey)
	oc.Observer = true
	oc.Join = []string{ms[1].Addr()}
	obs := startMember(t, oc)
	_ = obs.SetResources(resFor(9)) // ignored: observers publish nothing
	waitFor(t, "observer to see the 3 nodes", 10*time.Second, func() bool { return len(obs.View().Nodes) == 3 })
	time.Sleep(300 * time.Millisecond)
	if _, ok := ms[0].View().Node("scheduler"); ok {
		t.Fatal("the observer appears in the nodes' view")
	}
	for i := range 3 {
		n, _ := obs.View().Node(fmt.Sprintf("node-%03d", i))
		if n.Resources.MemUsedBytes != resFor(i).MemUsedBytes {
			t.Fatalf("observer sees node %d with %+v", i, n.Resources)
		}
	}
}

func TestSignificantChange(t *testing.T) {
	base := Resources{MemTotalBytes: 64 << 30, MemUsedBytes: 8 << 30, MemDonatableBytes: 1 << 30, GPUs: []GPU{{Index: 0, TotalMiB: 80000}}, Role: "node"}
	const delta = 64 << 20
	for name, tc := range map[string]struct {
		edit func(*Resources)
		want bool
	}{
		"unchanged":          {func(*Resources) {}, false},
		"used drifts":        {func(r *Resources) { r.MemUsedBytes += delta - 1 }, false},
		"used jumps":         {func(r *Resources) { r.MemUsedBytes -= delta }, true},
		"donatable drifts":   {func(r *Resources) { r.MemDonatableBytes -= 1 << 20 }, false},
		"donatable vanishes": {func(r *Resources) { r.MemDonatableBytes = 0 }, true},
		"gpu share changes":  {func(r *Resources) { r.GPUs = []GPU{{Index: 0, TotalMiB: 80000, UsedFraction: 0.5}} }, true},
		"total changes":      {func(r *Resources) { r.MemTotalBytes += 1 }, true},
	} {
		cur := base
		cur.GPUs = slices.Clone(base.GPUs)
		tc.edit(&cur)
		if got := significantChange(base, cur, delta); got != tc.want {
			t.Errorf("%s: significantChange = %v, want %v", name, got, tc.want)
		}
	}
}

// A drift too small to broadcast still reaches every member, by push-pull.
func TestSmallDriftRidesPushPull(t *testing.T) {
	ms := startCluster(t, 3, nil)
	r := Resources{MemTotalBytes: 64 << 30, MemUsedBytes: 8 << 30}
	_ = ms[0].SetResources(r)
	r.MemUsedBytes += 1 << 20
	_ = ms[0].SetResources(r)
	for _, m := range ms[1:] {
		waitFor(t, m.Name()+" to see the drift", time.Minute, func() bool {
			n, ok := m.View().Node(ms[0].Name())
			return ok && n.Resources.MemUsedBytes == r.MemUsedBytes
		})
	}
}
