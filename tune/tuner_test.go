package tune

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func spec(alg string, trials int, min, max float64) Spec {
	s := Spec{Name: "t", Metric: "loss", Algorithm: alg, Trials: trials,
		Budget: Budget{Min: min, Max: max},
		Params: []Param{{Name: "x", Type: ParamUniform, Min: 0, Max: 1}}}
	s.setDefaults()
	return s
}

func newTuner(t *testing.T, s Spec) *Tuner {
	t.Helper()
	tu, err := NewTuner(s)
	if err != nil {
		t.Fatal(err)
	}
	return tu
}

// render writes actions compactly: "run 3@9" or "stop 4".
func render(as []Action) string {
	var out []string
	for _, a := range as {
		if a.Op == "run" {
			out = append(out, fmt.Sprintf("run %d@%g", a.Trial, a.Budget))
		} else {
			out = append(out, fmt.Sprintf("stop %d", a.Trial))
		}
	}
	return strings.Join(out, ", ")
}

func report(t *testing.T, tu *Tuner, id int, m float64) {
	t.Helper()
	if err := tu.Report(id, m); err != nil {
		t.Fatal(err)
	}
}

// TestSyncSHA is a hand-computed successive halving: 9 trials, η = 3,
// budgets 1, 3, 9: 9 → 3 → 1, spending 9·1 + 3·2 + 1·6 = 21.
func TestSyncSHA(t *testing.T) {
	tu := newTuner(t, spec(AlgSHA, 9, 1, 9))
	if got := render(tu.Next()); got != "run 0@1, run 1@1, run 2@1, run 3@1, run 4@1, run 5@1, run 6@1, run 7@1, run 8@1" {
		t.Fatalf("rung 0: %s", got)
	}
	for id, m := range []float64{5, 3, 8, 1, 9, 2, 7, 4, 6} {
		if id == 8 {
			if got := tu.Next(); len(got) != 0 {
				t.Fatalf("promoted before the rung finished: %s", render(got))
			}
		}
		report(t, tu, id, m)
	}
	if got := render(tu.Next()); got != "run 3@3, run 5@3, run 1@3, stop 7, stop 0, stop 8, stop 6, stop 2, stop 4" {
		t.Fatalf("rung 1: %s", got)
	}
	report(t, tu, 3, 0.5)
	report(t, tu, 5, 0.9)
	report(t, tu, 1, 0.1)
	if got := render(tu.Next()); got != "run 1@9, stop 3, stop 5" {
		t.Fatalf("rung 2: %s", got)
	}
	report(t, tu, 1, 0.05)
	if got := tu.Next(); len(got) != 0 || !tu.Finished() {
		t.Fatalf("after the last rung: %s, finished %v", render(got), tu.Finished())
	}
	if tu.Spent != 21 {
		t.Fatalf("spent %v, want 21", tu.Spent)
	}
	if b, _ := tu.Best(); b.ID != 1 || b.Last() != 0.05 || tu.Trials[1].Status != Done {
		t.Fatalf("best %+v", b)
	}
}

// TestASHA: 9 trials, η = 3, 3 in parallel. A trial is promoted as soon
// as it is in the top ⌊k/3⌋ of the k results of its rung.
func TestASHA(t *testing.T) {
	s := spec(AlgASHA, 9, 1, 9)
	s.Parallel = 3
	tu := newTuner(t, s)
	step := func(id int, m float64, want string) {
		t.Helper()
		report(t, tu, id, m)
		if got := render(tu.Next()); got != want {
			t.Fatalf("after trial %d reported %v: %q, want %q", id, m, got, want)
		}
	}
	if got := render(tu.Next()); got != "run 0@1, run 1@1, run 2@1" {
		t.Fatal(got)
	}
	step(0, 5, "run 3@1")   // k=1: nobody promoted yet
	step(1, 3, "run 4@1")   // k=2
	step(2, 8, "run 1@3")   // k=3: the best (1, metric 3) goes on
	step(3, 1, "run 3@3")   // k=4: top 1 is trial 3
	step(4, 9, "run 5@1")   // k=5, top 1 = 3 already promoted
	step(5, 2, "run 5@3")   // k=6: top 2 = 3, 5
	step(1, 0.5, "run 6@1") // rung 1: k=1
	step(3, 0.7, "run 7@1") // rung 1: k=2
	step(5, 0.9, "run 1@9") // rung 1: k=3, best is trial 1
	step(6, 7, "run 8@1")   // rung 0: k=7, top 2 = 3, 5
	step(7, 4, "")          // k=8, top 2
	step(8, 6, "")          // k=9, top 3 = 3, 5, 1: all promoted
	step(1, 0.2, "stop 0, stop 2, stop 3, stop 4, stop 5, stop 6, stop 7, stop 8")
	if !tu.Finished() {
		t.Fatal("not finished")
	}
	if b, _ := tu.Best(); b.ID != 1 {
		t.Fatalf("best %d", b.ID)
	}
	// 9 rung-0 runs, 3 promotions to rung 1 (2 each), one to rung 2 (6).
	if tu.Spent != 9+3*2+6 {
		t.Fatalf("spent %v", tu.Spent)
	}
}

// TestHyperbandBrackets: η = 3 from 1 to 9 gives brackets of 9 trials
// (rungs 1, 3, 9), 5 trials (3, 9) and 3 trials (9).
func TestHyperbandBrackets(t *testing.T) {
	tu := newTuner(t, spec(AlgHyperband, 0, 1, 9))
	var got []string
	for b, br := range tu.Brackets {
		var rungs []string
		for r := 0; r < br.Rungs; r++ {
			rungs = append(rungs, fmt.Sprint(tu.RungBudget(b, r)))
		}
		got = append(got, fmt.Sprintf("%d:%s", br.N, strings.Join(rungs, "/")))
	}
	if strings.Join(got, " ") != "9:1/3/9 5:3/9 3:9" {
		t.Fatalf("brackets %v", got)
	}
	if n := len(tu.Next()); n != 17 {
		t.Fatalf("hyperband starts every bracket's first rung: %d runs", n)
	}
}

// TestTotalBudgetStops: a cap of 12 lets 9 rung-0 runs (9) and one
// promotion (2 more) through; the other two promotions would overrun it.
func TestTotalBudgetStops(t *testing.T) {
	s := spec(AlgSHA, 9, 1, 9)
	s.Budget.Total = 12
	tu := newTuner(t, s)
	tu.Next()
	for id := 0; id < 9; id++ {
		report(t, tu, id, float64(id))
	}
	if got := render(tu.Next()); got != "run 0@3, stop 1, stop 2, stop 3, stop 4, stop 5, stop 6, stop 7, stop 8" {
		t.Fatal(got)
	}
	if tu.Spent != 11 || tu.Trials[1].Note != "total budget exhausted" {
		t.Fatalf("spent %v, note %q", tu.Spent, tu.Trials[1].Note)
	}
}

func TestFailedTrialRanksLast(t *testing.T) {
	tu := newTuner(t, spec(AlgSHA, 3, 1, 3))
	tu.Next()
	if err := tu.Fail(0, "exit 1"); err != nil {
		t.Fatal(err)
	}
	report(t, tu, 1, 2)
	report(t, tu, 2, 1)
	if got := render(tu.Next()); got != "run 2@3, stop 1" {
		t.Fatal(got)
	}
	if err := tu.Report(0, 1); err == nil {
		t.Fatal("a failed trial accepted a report")
	}
}

// TestRestartResumes: a tuner saved as JSON mid-run and restored makes the
// same decisions as one that never stopped.
func TestRestartResumes(t *testing.T) {
	metric := func(id, rung int) float64 { return math.Mod(float64(id*7+rung*3), 11) }
	drive := func(tu *Tuner, restartAt int) string {
		var log []string
		for i := 0; !tu.Finished() && i < 100; i++ {
			if i == restartAt {
				b, err := json.Marshal(tu)
				if err != nil {
					t.Fatal(err)
				}
				tu = &Tuner{}
				if err := json.Unmarshal(b, tu); err != nil {
					t.Fatal(err)
				}
			}
			acts := tu.Next()
			log = append(log, render(acts))
			for _, a := range acts {
				if a.Op == "run" {
					report(t, tu, a.Trial, metric(a.Trial, a.Rung))
				}
			}
		}
		b, _ := tu.Best()
		return strings.Join(log, "|") + fmt.Sprintf(" best=%d", b.ID)
	}
	s := spec(AlgASHA, 12, 1, 27)
	s.Parallel = 4
	want := drive(newTuner(t, s), -1)
	if got := drive(newTuner(t, s), 3); got != want {
		t.Fatalf("restarted run differs:\n%s\n%s", got, want)
	}
}
