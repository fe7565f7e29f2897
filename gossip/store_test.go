package gossip

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func sec(v uint64, d string) Section { return Section{Version: v, Data: json.RawMessage(d)} }

// Merging the same updates in any order, any number of times, ends in
// the same state: each section is a last-writer-wins register.
func TestMergeIsIdempotentAndOrderIndependent(t *testing.T) {
	updates := []Record{
		{Node: "a", Sections: map[string]Section{"res": sec(1, `{"mt":1}`)}},
		{Node: "a", Sections: map[string]Section{"res": sec(3, `{"mt":3}`), "links": sec(1, `[]`)}},
		{Node: "a", Sections: map[string]Section{"res": sec(2, `{"mt":2}`)}},
		{Node: "b", Sections: map[string]Section{"future": sec(5, `{"x":1}`)}},
		{Node: "a", Sections: map[string]Section{"links": sec(4, `[{"p":"b"}]`)}},
	}
	want := map[string]Record{
		"a": {Node: "a", Sections: map[string]Section{"res": sec(3, `{"mt":3}`), "links": sec(4, `[{"p":"b"}]`)}},
		"b": {Node: "b", Sections: map[string]Section{"future": sec(5, `{"x":1}`)}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		s := newStore()
		order := r.Perm(len(updates))
		for _, i := range order {
			s.merge(updates[i])
			if trial%2 == 0 {
				s.merge(updates[i]) // duplicates change nothing
			}
		}
		for name, w := range want {
			got, _ := s.get(name)
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("order %v: %s = %+v, want %+v", order, name, got, w)
			}
		}
	}
}

func TestMergeReturnsOnlyNewSections(t *testing.T) {
	s := newStore()
	s.merge(Record{Node: "a", Sections: map[string]Section{"res": sec(2, `1`), "coord": sec(2, `1`)}})
	d := s.merge(Record{Node: "a", Sections: map[string]Section{"res": sec(1, `0`), "coord": sec(3, `2`)}})
	if d == nil || len(d.Sections) != 1 || d.Sections["coord"].Version != 3 {
		t.Fatalf("delta = %+v, want only coord v3", d)
	}
	if s.merge(Record{Node: "a", Sections: map[string]Section{"coord": sec(3, `2`)}}) != nil {
		t.Fatal("re-merging a known version produced a delta")
	}
}

func TestDeadMemberHiddenThenPruned(t *testing.T) {
	s := newStore()
	s.setAlive("a")
	s.merge(Record{Node: "a", Sections: map[string]Section{"res": sec(1, `{}`)}})
	s.setDead("a")
	if len(s.live()) != 0 {
		t.Fatal("a dead member's record is still in the view")
	}
	s.setAlive("a") // a refuted suspicion: nothing lost
	if len(s.live()) != 1 {
		t.Fatal("a member back from a false death lost its record")
	}
	s.setDead("a")
	s.prune(time.Now().Add(time.Hour), 10*time.Minute)
	if _, ok := s.get("a"); ok {
		t.Fatal("a long-dead member's record was not pruned")
	}
}

// Newer nodes add fields and sections; this version keeps what it knows,
// ignores the rest and relays unknown sections unchanged.
func TestDecoderToleratesNewerSchema(t *testing.T) {
	msg := []byte(`{"schema":7,"kind":"update","new_top":true,"recs":[{"n":"a","extra":1,
	  "s":{"res":{"v":9,"d":{"mt":100,"mu":40,"md":10,"new_field":[1,2]},"z":0},
	       "memshare":{"v":2,"d":{"leases":[{"to":"b","bytes":5}]}}}}]}`)
	env, err := decode(msg, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	v := buildView("self", env.Records)
	n, ok := v.Node("a")
	if !ok || n.Resources.MemTotalBytes != 100 || n.MemFreeBytes() != 60 || n.Resources.MemDonatableBytes != 10 {
		t.Fatalf("view of a = %+v", n)
	}
	if string(n.Extra["memshare"]) != `{"leases":[{"to":"b","bytes":5}]}` {
		t.Fatalf("unknown section not kept verbatim: %s", n.Extra["memshare"])
	}
}

func TestMalformedSectionHidesOnlyItself(t *testing.T) {
	recs := []Record{{Node: "a", Sections: map[string]Section{
		"res":   sec(1, `{"mt":"not a number"}`),
		"links": sec(1, `[{"p":"b","bw":5,"n":1,"at":1}]`),
	}}}
	n, _ := buildView("s", recs).Node("a")
	if n.HasRes || len(n.Links) != 1 {
		t.Fatalf("view = %+v, want links only", n)
	}
}

func TestParseKeys(t *testing.T) {
	keys, err := ParseKeys([]byte("# primary\nMDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n\nMDEyMzQ1Njc4OWFiY2RlZg==\n"))
	if err != nil || len(keys) != 2 || len(keys[0]) != 32 || len(keys[1]) != 16 {
		t.Fatalf("keys=%d err=%v", len(keys), err)
	}
	for _, bad := range []string{"", "# only a comment\n", "!!!\n", "c2hvcnQ=\n"} {
		if _, err := ParseKeys([]byte(bad)); err == nil {
			t.Errorf("ParseKeys(%q) accepted", bad)
		}
	}
}
