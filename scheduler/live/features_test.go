package live

import (
	"strings"
	"testing"
)

func TestParseBatchSize(t *testing.T) {
	for in, want := range map[string]float64{"": 0, "64": 64, " 32 ": 32, "1": 1} {
		if got, err := parseBatchSize(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"0", "-8", "12.5", "NaN", "+Inf", "lots", "1e400"} {
		if _, err := parseBatchSize(bad); err == nil || !strings.Contains(err.Error(), MetaBatchSize) {
			t.Errorf("%q: want an error naming %s, got %v", bad, MetaBatchSize, err)
		}
	}
}

// A job's model and batch size from meta reach the policy, which is what
// interference-bounded placement keys a job's type by.
func TestModelFeaturesReachSnapshot(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Token = "t"
	s, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	half := gang{Workers: []worker{{Group: "w0", Task: "t"}}, Fraction: 0.5}
	q := &entry{stub: &jobStub{ID: "q", Meta: map[string]string{MetaModel: "ResNet-50", MetaBatchSize: "64"}}, phase: phaseQueued,
		rec: &record{Submit: 1}, job: &cachedJob{gang: half, batch: 64}}
	es := []*entry{q}
	snap := s.snapshot(newGPUBook(testNodes(), es, nil), sortedIDs(testNodes()), es, 12)
	j := snap.Jobs[0]
	if j.Model != "ResNet-50" || j.Features.BatchSize != 64 || j.Fraction != 0.5 {
		t.Fatalf("policy job: model %q, features %+v, fraction %v", j.Model, j.Features, j.Fraction)
	}
}

// Any meta value yields a whole batch size ≥ 1 or an error naming the key.
func FuzzParseBatchSize(f *testing.F) {
	for _, s := range []string{"", "64", " 32 ", "0", "-1", "12.5", "NaN", "1e400", "0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		x, err := parseBatchSize(v)
		if err != nil {
			if !strings.Contains(err.Error(), MetaBatchSize) {
				t.Fatalf("%q: error %v does not name the key", v, err)
			}
			return
		}
		if v != "" && (x < 1 || x != float64(int64(x))) {
			t.Fatalf("%q accepted as %v", v, x)
		}
	})
}
