package profile

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
)

func profilesDir(t *testing.T) string { return repo.TestData(t, "model-profiles") }

func loadSet(t *testing.T) *Set {
	t.Helper()
	s, err := LoadSet(profilesDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoadRealProfiles(t *testing.T) {
	s := loadSet(t)
	want := "bert,cifar10,deepspeech2,imagenet,ncf,yolov3"
	if got := strings.Join(s.Names(), ","); got != want {
		t.Fatalf("models with speed = %s, want %s", got, want)
	}
	if len(s.Models["gpt_pmp"].Curves) != 6 {
		t.Fatalf("gpt_pmp curves = %d", len(s.Models["gpt_pmp"].Curves))
	}
	m, _ := s.Get("imagenet")
	if m.RefBatch != 20 {
		t.Fatalf("imagenet ref batch %v, want 20", m.RefBatch)
	}
	// Measured rows at bsz 20 (placements.csv).
	for shape, want := range map[string]float64{"1": 0.14740917682647706, "22": 0.3831308126449585, "1111": 0.33392465114593506} {
		sh, _ := ParseShape(shape)
		if got := m.StepTime(sh); math.Abs(got-want) > 1e-12 {
			t.Errorf("StepTime(%s) = %v, want measured %v", shape, got, want)
		}
	}
	if _, err := s.Get("nosuch"); err == nil || !strings.Contains(err.Error(), "imagenet") {
		t.Fatalf("Get(nosuch) error = %v", err)
	}
}

func TestSpreadIsSlowerForEveryModel(t *testing.T) {
	s := loadSet(t)
	for _, name := range s.Names() {
		m, _ := s.Get(name)
		cons := m.StepTime([]int{4})
		spread := m.StepTime([]int{1, 1, 1, 1})
		if spread <= cons {
			t.Errorf("%s: 1111 step %v not slower than 4 step %v", name, spread, cons)
		}
		if sd := m.Slowdown([]int{1, 1, 1, 1}, 4); sd <= 1 {
			t.Errorf("%s: slowdown %v ≤ 1", name, sd)
		}
		if sd := m.Slowdown([]int{4}, 4); sd != 1 {
			t.Errorf("%s: consolidated slowdown %v", name, sd)
		}
	}
}

func TestUnmeasuredShapesAreModelled(t *testing.T) {
	m, _ := loadSet(t).Get("imagenet")
	compute := m.step["1"] - m.sync["1"]
	// 8 GPUs on one node: compute + sync of the largest measured single node (4).
	if got, want := m.StepTime([]int{8}), compute+m.sync["4"]; math.Abs(got-want) > 1e-12 {
		t.Fatalf("StepTime(8) = %v, want %v", got, want)
	}
	// 2 nodes × 8: compute + mean measured 2-node sync.
	if got, want := m.StepTime([]int{8, 8}), compute+m.netSync[2]; math.Abs(got-want) > 1e-12 {
		t.Fatalf("StepTime(8,8) = %v, want %v", got, want)
	}
	// 40 nodes: clamped to the largest measured node count (16).
	many := make([]int, 40)
	for i := range many {
		many[i] = 1
	}
	if got, want := m.StepTime(many), compute+m.netSync[16]; math.Abs(got-want) > 1e-12 {
		t.Fatalf("StepTime(40×1) = %v, want %v", got, want)
	}
	// 5 nodes sit between measured 4 and 6.
	five := m.networkSync(5)
	if lo, hi := min(m.netSync[4], m.netSync[6]), max(m.netSync[4], m.netSync[6]); five < lo || five > hi {
		t.Fatalf("networkSync(5) = %v outside [%v, %v]", five, lo, hi)
	}
	if m.Throughput([]int{4}) <= m.Throughput([]int{1}) {
		t.Fatal("4 GPUs should process more samples per second than 1")
	}
}

func TestInterferenceFormula(t *testing.T) {
	in := DefaultInterference()
	cases := []struct {
		d    []float64
		want float64
	}{
		{[]float64{1}, 1},
		{[]float64{0.3, 0.4}, 1.05},
		{[]float64{0.8, 0.7}, 1.5 * 1.05},
		{[]float64{0.5, 0.5, 0.5}, 1.5 * 1.10},
		{[]float64{2, 0}, 1 * 1.05}, // demands are capped at one GPU
	}
	for _, c := range cases {
		if got := in.Factor(c.d); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Factor(%v) = %v, want %v", c.d, got, c.want)
		}
	}
}

func TestCurves(t *testing.T) {
	m, _ := loadSet(t).Get("imagenet")
	c := m.CurveFor(250)
	if c == nil || c.GlobalBatch != 200 {
		t.Fatalf("CurveFor(250) = %+v, want the 200 curve", c)
	}
	s0, l0 := c.LossAt(0, 1000)
	s1, l1 := c.LossAt(1, 1000)
	if s0 != 0 || s1 != 1000 || l1 >= l0 || l1 <= 0 {
		t.Fatalf("loss at 0: (%v,%v), at 1: (%v,%v): want positive and falling", s0, l0, s1, l1)
	}
}

func TestBrokenProfiles(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "m")
	os.Mkdir(md, 0o755)
	os.WriteFile(filepath.Join(md, "placements.csv"), []byte("placement,local_bsz,step_time,sync_time\n1,4,x,0.1\n"), 0o644)
	_, err := LoadModel(md)
	if err == nil || !strings.Contains(err.Error(), "placements.csv:2") {
		t.Fatalf("bad number: err = %v", err)
	}
	os.WriteFile(filepath.Join(md, "placements.csv"), []byte("placement,local_bsz,step_time,sync_time\n10,4,0.2,0.1\n"), 0o644)
	if _, err = LoadModel(md); err == nil || !strings.Contains(err.Error(), "1-9") {
		t.Fatalf("bad shape: err = %v", err)
	}
	os.WriteFile(filepath.Join(md, "placements.csv"), []byte("placement,step_time\n1,0.2\n"), 0o644)
	if _, err = LoadModel(md); err == nil || !strings.Contains(err.Error(), "local_bsz") {
		t.Fatalf("missing column: err = %v", err)
	}
}
