package profile

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
)

func TestGavelExcerpt(t *testing.T) {
	g, err := LoadGavel(repo.TestData(t, "gavel-throughputs", "simulation_throughputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	r18 := GavelType{Model: "ResNet-18", Batch: 32, Scale: 1}
	r50 := GavelType{Model: "ResNet-50", Batch: 64, Scale: 1}
	a3c := GavelType{Model: "A3C", Scale: 1}
	if got := len(g.Types("v100")); got != 4 {
		t.Fatalf("v100 types = %d, want 4", got)
	}
	// Hand-computed from the excerpt: ResNet-18 alone 29.947 steps/s,
	// 15.055 beside ResNet-50; ResNet-50 alone 4.3948, 3.7047 beside it.
	sa, sb, ok := g.Slowdowns("v100", r18, r50)
	if !ok || math.Abs(sa-29.947157347732464/15.055176143810225) > 1e-12 || math.Abs(sb-4.394774823323071/3.7046719336355154) > 1e-12 {
		t.Fatalf("slowdowns %v %v %v", sa, sb, ok)
	}
	if _, _, ok := g.Slowdowns("k80", r18, r50); ok {
		t.Fatal("a GPU type not in the file has no measurement")
	}
	if _, _, ok := g.Slowdowns("v100", r18, GavelType{Model: "CycleGAN", Scale: 1}); ok {
		t.Fatal("an unmeasured pair must say so")
	}
	if a3c.String() != "A3C ×1" || r18.String() != "ResNet-18 (batch size 32) ×1" {
		t.Fatalf("names %q %q", a3c, r18)
	}
}

func TestGavelRealFile(t *testing.T) {
	g, err := LoadGavel(filepath.Join(repo.SharedTraces(t, "gavel-throughputs"), "simulation_throughputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, gpu := range []string{"v100", "p100", "k80"} {
		m := g.GPUs[gpu]
		if m == nil || len(m.Alone) != 83 || len(m.Pairs) != 1759 {
			t.Fatalf("%s: want 83 types and 1,759 pairs, got %+v", gpu, m != nil)
		}
	}
	feasible := 0
	for _, p := range g.GPUs["v100"].Pairs {
		if p.Feasible() {
			feasible++
		}
	}
	if feasible != 1759-1123 {
		t.Fatalf("v100 feasible pairs = %d, want 636", feasible)
	}
	// The suspect exact-alone records: V100 only (see Unslowed).
	for gpu, want := range map[string][2]int{"v100": {80, 636}, "p100": {0, 656}, "k80": {0, 589}} {
		if u, n := g.Unslowed(gpu); u != want[0] || n != want[1] {
			t.Errorf("%s: Unslowed = %d of %d, want %d of %d", gpu, u, n, want[0], want[1])
		}
	}
	// Dropping them (135 ordered pairs have such a record on one side or
	// the other) leaves 501 of V100's 636, and g as it was.
	d := g.WithoutUnslowed("v100")
	if u, n := d.Unslowed("v100"); u != 0 || n != 501 {
		t.Errorf("WithoutUnslowed: %d of %d exact-alone records left, want 0 of 501", u, n)
	}
	if u, _ := g.Unslowed("v100"); u != 80 || d.GPUs["p100"] != g.GPUs["p100"] {
		t.Error("WithoutUnslowed changed the original or copied another GPU type")
	}
}

func TestGavelBadInput(t *testing.T) {
	good := `"('A3C', 1)": {"null": 5, "('A3C', 1)": [2.5, 2.5]}`
	cases := []struct{ name, body, want string }{
		{"not json", `{"v100": `, "gavel throughputs"},
		{"empty", `{}`, "no GPU types"},
		{"bad key", `{"v100": {"A3C": {"null": 5}}}`, `job type "A3C"`},
		{"bad scale", `{"v100": {"('A3C', 0)": {"null": 5}}}`, "scale"},
		{"no alone", `{"v100": {"('A3C', 1)": {"('A3C', 1)": [1, 1]}}}`, `no "null" entry`},
		{"negative alone", `{"v100": {"('A3C', 1)": {"null": -1}}}`, "≥ 0"},
		{"pair not a list", `{"v100": {` + good + `, "('LM (batch size 5)', 1)": {"null": 3, "('A3C', 1)": 7}}}`, `partner "('A3C', 1)"`},
		{"pair of three", `{"v100": {"('A3C', 1)": {"null": 5, "('A3C', 1)": [1, 2, 3]}}}`, "[own, partner]"},
		{"bad partner key", `{"v100": {"('A3C', 1)": {"null": 5, "A3C": [1, 2]}}}`, "partner"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "g.json")
			if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadGavel(p)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("error %v, want one naming the file and %q", err, c.want)
			}
		})
	}
}

// The real file truncated anywhere is refused with an error, never a panic
// or a partial table.
func TestGavelTruncatedCopies(t *testing.T) {
	b, err := os.ReadFile(repo.TestData(t, "gavel-throughputs", "simulation_throughputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b)-1; n += 97 {
		if _, err := ParseGavel(b[:n]); err == nil {
			t.Fatalf("truncated at %d accepted", n)
		}
	}
}

func FuzzParseGavel(f *testing.F) {
	f.Add([]byte(`{"v100": {"('A3C', 1)": {"null": 5, "('A3C', 1)": [2.5, 2.5]}}}`))
	f.Add([]byte(`{"v100": {"('ResNet-18 (batch size 32)', 1)": {"null": 5}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseGavel(b)
		if err != nil {
			return
		}
		for _, m := range g.GPUs {
			for ty, a := range m.Alone {
				if !(a >= 0) || ty.Scale < 1 {
					t.Fatalf("accepted %v alone %v", ty, a)
				}
			}
		}
	})
}

func TestGavelGraphsCoverEveryGavelModel(t *testing.T) {
	graphs, err := GavelGraphs()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"ResNet-18", "ResNet-50", "Transformer", "LM", "Recommendation", "A3C", "CycleGAN"} {
		if _, ok := graphs[m]; !ok {
			t.Fatalf("no graph features for %s", m)
		}
	}
	// ResNet-50 at 224×224 is 4.1 GMACs: about 8.2 GFLOPs forward.
	if g := graphs["ResNet-50"].GFLOPs; g < 8 || g > 8.4 {
		t.Fatalf("ResNet-50 forward GFLOPs %v, want ≈ 8.2", g)
	}
	if _, err := ParseGraphs([]byte(`{"x": {"params_m": 1, "gflops": 1, "layers": 1, "conv_frac": 0.5}}`)); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("fractions not summing to 1 accepted: %v", err)
	}
}

// The embedded features are what the script computes today (skipped where
// Debian's python3-torch is absent; `make deps` installs it).
func TestGavelGraphsMatchTheScript(t *testing.T) {
	if testing.Short() {
		t.Skip("runs PyTorch")
	}
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skip("python3-torch not installed: `make deps`")
	}
	out, err := exec.Command(py, filepath.Join(repoRoot(t), "workloads", "model_features.py")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(gavelFeaturesJSON) {
		t.Fatalf("workloads/model_features.py prints other features than the embedded gavel_features.json; regenerate it:\n%s", out)
	}
}

func repoRoot(t *testing.T) string {
	r, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	return r
}
