package fluid

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
)

// TestBuiltinProfiles: every checked-in profile parses (BuiltinProfiles
// panics otherwise) and the digits trial's is there.
func TestBuiltinProfiles(t *testing.T) {
	p, ok := BuiltinProfiles()["digits-mlp"]
	if !ok || len(p.Points) < 2 {
		t.Fatalf("digits-mlp profile: %+v", p)
	}
}

func TestParseProfileNamesTheField(t *testing.T) {
	cases := map[string]string{
		`{`:                                 "profile:",
		`{"points":[{"batch":1,"util":1}]}`: "model",
		`{"model":"m"}`:                     "points",
		`{"model":"m","points":[{"batch":0,"util":0.5}]}`:             "points[0].batch",
		`{"model":"m","points":[{"batch":8,"util":1.5}]}`:             "points[0].util",
		`{"model":"m","points":[{"batch":8,"util":0.5,"step_s":-1}]}`: "points[0].step_s",
		`{"model":"m","points":[{"batch":8,"util":0.5},{"batch":9}]}`: "points[1].util",
	}
	for src, field := range cases {
		if _, err := ParseProfile([]byte(src)); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v does not name %q", src, err, field)
		}
	}
}

// TestProfileAt: linear between measured batches, clamped outside.
func TestProfileAt(t *testing.T) {
	p, err := ParseProfile([]byte(`{"model":"m","points":[{"batch":64,"util":0.2,"step_s":2},{"batch":16,"util":0.6,"step_s":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for batch, want := range map[float64]float64{8: 0.6, 16: 0.6, 40: 0.4, 64: 0.2, 1000: 0.2} {
		if got := p.At(batch).Util; math.Abs(got-want) > 1e-12 {
			t.Errorf("util at %v = %v, want %v", batch, got, want)
		}
	}
}

// digitsTrials: n trials of a profiled model that report no utilisation
// (as on simulated GPUs), on a one-GPU cluster.
func digitsTrials(n int, model string, batch float64) *policy.Snapshot {
	s := &policy.Snapshot{Cluster: cluster(1, 1)}
	for i := 0; i < n; i++ {
		j := &policy.Job{ID: fmt.Sprint("tune-digits/trial-t", i), Model: model, Submit: 1, Workers: 1, Fraction: 0.25, MemMiB: 1024}
		j.Features.BatchSize = batch
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// TestPolicyPacksByProfile: 4 trials reporting no utilisation on one GPU
// run one at a time (unknown = busy), unless their model's profile says
// each keeps half the device busy: then two share the GPU, at 0.5 each.
// A trial's own utilisation wins over the profile; no batch, no profile.
func TestPolicyPacksByProfile(t *testing.T) {
	ps := Profiles{"half": {Model: "half", Points: []ProfilePoint{{Batch: 16, Util: 0.5}, {Batch: 128, Util: 0.5}}}}
	mk := func(cfg Config) *Policy {
		return New(cfg, policy.NewFramework(order.NewFIFO(order.FIFOConfig{}), place.NewConsolidated()))
	}
	cases := []struct {
		name  string
		cfg   Config
		model string
		batch float64
		util  float64
		want  int
	}{
		{"profiled", Config{Profiles: ps}, "half", 32, 0, 2},
		{"no profiles", Config{Profiles: Profiles{}}, "half", 32, 0, 1},
		{"other model", Config{Profiles: ps}, "bert", 32, 0, 1},
		{"no batch", Config{Profiles: ps}, "half", 0, 0, 1},
		{"own util wins", Config{Profiles: ps}, "half", 32, 1, 1},
		{"whole-gpu baseline", Config{Mode: WholeGPU, Profiles: ps}, "half", 32, 0, 1},
	}
	for _, c := range cases {
		s := digitsTrials(4, c.model, c.batch)
		for _, j := range s.Jobs {
			j.Util = c.util
		}
		d := mk(c.cfg).Decide(s)
		apply(s, d)
		checkCluster(t, s.Cluster)
		if len(d.Starts) != c.want {
			t.Fatalf("%s: %d trials started, want %d: %+v", c.name, len(d.Starts), c.want, d)
		}
		for _, st := range d.Starts {
			if f := st.Placement.Slots[0].Fraction; math.Abs(f-1/float64(c.want)) > 1e-9 {
				t.Fatalf("%s: %s fraction %v", c.name, st.JobID, f)
			}
		}
	}
}

// TestBuiltinDigitsProfilePacks: the measured digits profile packs the
// shipped tuning job's trials (batches 16-128) at least two to a GPU.
func TestBuiltinDigitsProfilePacks(t *testing.T) {
	for _, b := range []float64{16, 32, 64, 128} {
		s := digitsTrials(4, "digits-mlp", b)
		d := newFluid(WaterFill).Decide(s)
		if len(d.Starts) < 2 {
			t.Fatalf("batch %v: %d trials on the GPU, util %v", b, len(d.Starts), BuiltinProfiles()["digits-mlp"].At(b).Util)
		}
	}
}

// FuzzParseProfile: any input parses to a valid profile or an error,
// never a panic, and a parsed profile answers At for any batch within
// its measured utilisations.
func FuzzParseProfile(f *testing.F) {
	data, err := builtinFS.ReadFile("profiles/digits-mlp.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, 48.0)
	f.Fuzz(func(t *testing.T, src []byte, batch float64) {
		p, err := ParseProfile(src)
		if err != nil {
			return
		}
		lo, hi := 1.0, 0.0
		for _, pt := range p.Points {
			lo, hi = min(lo, pt.Util), max(hi, pt.Util)
		}
		if u := p.At(batch).Util; !math.IsNaN(batch) && (u < lo-1e-9 || u > hi+1e-9) {
			t.Fatalf("util %v at batch %v outside [%v, %v]", u, batch, lo, hi)
		}
	})
}
