package live

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// Jobs with the same constraints share one memoised node set; different
// constraints get their own, and the memo follows node events.
func TestNodeSetsAreSharedAndFollowNodeEvents(t *testing.T) {
	s := testScheduler(t)
	m := newMirror()
	m.nodes = poolNodesForTest()
	cached := func(id string, cs ...*api.Constraint) *cachedJob {
		job := testJob(id, map[string]any{"command": "x", "gpus": 1})
		job.Constraints = cs
		g, err := parseGang(job)
		if err != nil {
			t.Fatal(err)
		}
		return &cachedJob{job: job, gang: g}
	}
	a, b := cached("a"), cached("b")
	arm := cached("arm", api.NewConstraint("${attr.cpu.arch}", "=", "arm64"))
	w := m.world(s.managed)
	if sa, sb := w.eligibleSet(a, "default"), w.eligibleSet(b, "default"); sa.key != "n1,n2" || &sa.ids[0] != &sb.ids[0] {
		t.Fatalf("equal jobs: %q and %q, shared = %v", sa.key, sb.key, &sa.ids[0] == &sb.ids[0])
	}
	if got := w.eligibleSet(arm, "default").key; got != "n2" {
		t.Fatalf("arm64 constraint: %q", got)
	}
	if got := w.poolSet(allPool).key; got != "n1,n2,n3" {
		t.Fatalf("pool all: %q", got)
	}
	// A new usable node in pool default joins the set at the next round.
	ev := nodeEvent(t, "NodeRegistration", 3, true)
	setPayloadField(t, &ev, "Node", "ID", "n0")
	if _, err := s.applyEvent(m, &ev); err != nil {
		t.Fatal(err)
	}
	if got := m.world(s.managed).eligibleSet(a, "default").key; got != "n0,n1,n2" {
		t.Fatalf("after the node event: %q", got)
	}
	if !strings.HasPrefix(a.fitKey(), "k") || a.fitKey() == arm.fitKey() {
		t.Fatalf("fit keys %q %q", a.fitKey(), arm.fitKey())
	}
}

// Equal node lists reached through different constraints share one id
// (the class map's key); different lists get different ids.
func TestNodeSetsNumberEqualListsOnce(t *testing.T) {
	var c nodeSets
	a := c.get("x", func() []string { return []string{"n1", "n2"} })
	b := c.get("y", func() []string { return []string{"n1", "n2"} })
	d := c.get("z", func() []string { return []string{"n2"} })
	if a.id == 0 || a.id != b.id || d.id == a.id {
		t.Fatalf("ids: equal lists %d and %d, other list %d", a.id, b.id, d.id)
	}
	if again := c.get("x", func() []string { t.Fatal("memo rebuilt"); return nil }); again.id != a.id {
		t.Fatalf("memo hit changed id: %d → %d", a.id, again.id)
	}
}
