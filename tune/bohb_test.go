package tune

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"
)

// driveAll runs a tuner to the end, reporting metric(config, rung).
func driveAll(t *testing.T, tu *Tuner, metric func(Config, int) float64) {
	t.Helper()
	for i := 0; !tu.Finished(); i++ {
		if i > 10000 {
			t.Fatal("tuner does not finish")
		}
		acts := tu.Next()
		for _, a := range acts {
			if a.Op == "run" {
				report(t, tu, a.Trial, metric(tu.Trials[a.Trial].Config, a.Rung))
			}
		}
	}
}

// TestBOHBBracketsInOrder: Hyperband's brackets (9, 5, 3 trials for η = 3
// from 1 to 9), but only the first is drawn and run at first.
func TestBOHBBracketsInOrder(t *testing.T) {
	tu := newTuner(t, spec(AlgBOHB, 0, 1, 9))
	if len(tu.Brackets) != 3 || tu.Brackets[1].N != 5 || tu.Brackets[2].N != 3 {
		t.Fatalf("brackets %+v", tu.Brackets)
	}
	if acts := tu.Next(); len(acts) != 9 || len(tu.Trials) != 9 || tu.Finished() {
		t.Fatalf("first bracket: %d runs, %d trials", len(acts), len(tu.Trials))
	}
}

// TestBOHBModelFindsTheRegion: with metric |x − 0.2| (+ noise from the
// rung), the configurations BOHB draws after the first bracket lie closer
// to 0.2 than the first bracket's random ones, for every seed tried.
func TestBOHBModelFindsTheRegion(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		s := spec(AlgBOHB, 0, 1, 27)
		s.Seed = seed
		tu := newTuner(t, s)
		driveAll(t, tu, func(c Config, rung int) float64 {
			x, _ := strconv.ParseFloat(c["x"], 64)
			return math.Abs(x-0.2) + 0.01/float64(rung+1)
		})
		first, later := meanDist(tu, 0, tu.Brackets[1].First), meanDist(tu, tu.Brackets[1].First, len(tu.Trials))
		if !(later < 0.75*first) {
			t.Errorf("seed %d: mean |x−0.2| %.3f in later brackets vs %.3f at random", seed, later, first)
		}
		if b, _ := tu.Best(); math.Abs(mustParse(b.Config["x"])-0.2) > 0.05 {
			t.Errorf("seed %d: best x = %s", seed, b.Config["x"])
		}
	}
}

func meanDist(tu *Tuner, from, to int) float64 {
	s := 0.0
	for _, tr := range tu.Trials[from:to] {
		s += math.Abs(mustParse(tr.Config["x"]) - 0.2)
	}
	return s / float64(to-from)
}

// TestBOHBChoicesAndRestart: a space with a choice and an int (the
// model's categorical and rounding paths); a tuner
// restored from JSON mid-run ends the same as one never stopped.
func TestBOHBChoicesAndRestart(t *testing.T) {
	s := spec(AlgBOHB, 0, 1, 9)
	s.Params = append(s.Params, Param{Name: "opt", Type: ParamChoice, Values: []string{"sgd", "adam", "rms"}},
		Param{Name: "depth", Type: ParamInt, Min: 1, Max: 8})
	metric := func(c Config, rung int) float64 {
		m := math.Abs(mustParse(c["x"])-0.7) + math.Abs(mustParse(c["depth"])-3)/8
		if c["opt"] != "adam" {
			m += 0.3
		}
		return m
	}
	a := newTuner(t, s)
	driveAll(t, a, metric)
	b := newTuner(t, s)
	for i := 0; i < 3; i++ {
		for _, act := range b.Next() {
			if act.Op == "run" {
				report(t, b, act.Trial, metric(b.Trials[act.Trial].Config, act.Rung))
			}
		}
	}
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	c := &Tuner{}
	if err := json.Unmarshal(raw, c); err != nil {
		t.Fatal(err)
	}
	driveAll(t, c, metric)
	ba, _ := a.Best()
	bc, _ := c.Best()
	if len(a.Trials) != len(c.Trials) || formatConfig(ba.Config) != formatConfig(bc.Config) {
		t.Fatalf("restored run differs: %d vs %d trials, best %v vs %v", len(a.Trials), len(c.Trials), ba.Config, bc.Config)
	}
}
