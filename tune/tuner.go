package tune

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// Status is where a trial is in its life.
type Status string

const (
	Pending Status = "pending" // not started yet
	Running Status = "running" // training towards its rung's budget
	Paused  Status = "paused"  // rung finished, awaiting promotion
	Stopped Status = "stopped" // dropped by the algorithm (result kept)
	Done    Status = "done"    // finished the last rung of its bracket
	Failed  Status = "failed"  // the trial's job failed
)

// Trial is one configuration and what it has shown so far.
type Trial struct {
	ID      int     `json:"id"`
	Bracket int     `json:"bracket"`
	Config  Config  `json:"config"`
	Rung    int     `json:"rung"`
	Status  Status  `json:"status"`
	Budget  float64 `json:"budget"` // cumulative budget of its current rung
	// Metrics holds the metric at the end of each finished rung.
	// A failed rung is NaN (JSON null).
	Metrics Metrics `json:"metrics,omitempty"`
	Note    string  `json:"note,omitempty"`
}

// Last is the trial's newest rung metric (NaN if none).
func (t *Trial) Last() float64 {
	if len(t.Metrics) == 0 {
		return math.NaN()
	}
	return t.Metrics[len(t.Metrics)-1]
}

// Metrics are rung results; NaN (a failed rung) is JSON null.
type Metrics []float64

// MarshalJSON writes NaN as null, which JSON numbers cannot hold.
func (m Metrics) MarshalJSON() ([]byte, error) {
	out := make([]*float64, len(m))
	for i := range m {
		if !math.IsNaN(m[i]) && !math.IsInf(m[i], 0) {
			out[i] = &m[i]
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads null as NaN.
func (m *Metrics) UnmarshalJSON(b []byte) error {
	var in []*float64
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*m = make(Metrics, len(in))
	for i, v := range in {
		(*m)[i] = math.NaN()
		if v != nil {
			(*m)[i] = *v
		}
	}
	return nil
}

// Bracket is one successive-halving bracket: N trials starting at budget R0,
// Rungs rungs, synchronous (rung by rung) or asynchronous (ASHA).
type Bracket struct {
	N     int     `json:"n"`
	R0    float64 `json:"r0"`
	Rungs int     `json:"rungs"`
	Sync  bool    `json:"sync"`
	First int     `json:"first"` // ID of its first trial
	// Started says the bracket's trials exist (BOHB draws them when the
	// bracket starts; every other algorithm at once).
	Started bool `json:"started"`
	Rung    int  `json:"rung"` // synchronous brackets: the current rung
}

// Action is what the controller must do now: run a trial until its
// cumulative budget reaches Budget, or stop it.
type Action struct {
	Op     string  `json:"op"` // "run" or "stop"
	Trial  int     `json:"trial"`
	Rung   int     `json:"rung"`
	Budget float64 `json:"budget"`
}

// Tuner is a tuning algorithm as a deterministic state machine: Next says
// what to run or stop, Report feeds a rung's metric back. It holds no
// generator or clock, and its fields are its whole state (JSON), so a
// restarted controller resumes from a saved copy.
type Tuner struct {
	Spec     Spec      `json:"spec"`
	Brackets []Bracket `json:"brackets"`
	Trials   []Trial   `json:"trials"`
	// Spent is the budget committed so far (cumulative over trials).
	Spent float64 `json:"spent"`
}

// NewTuner lays out the brackets and draws every configuration.
func NewTuner(s Spec) (*Tuner, error) {
	s.setDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	t := &Tuner{Spec: s}
	b := s.Budget
	eta := b.Reduction
	top := int(math.Floor(math.Log(b.Max/b.Min)/math.Log(eta) + 1e-9))
	switch s.Algorithm {
	case AlgRandom:
		t.add(Bracket{N: s.Trials, R0: b.Max, Rungs: 1})
	case AlgGrid:
		t.add(Bracket{N: s.Trials, R0: b.Max, Rungs: 1})
	case AlgSHA, AlgASHA:
		t.add(Bracket{N: s.Trials, R0: b.Max / math.Pow(eta, float64(top)), Rungs: top + 1, Sync: s.Algorithm == AlgSHA})
	case AlgHyperband, AlgBOHB:
		if n := hyperbandTrials(top, eta); n > maxTrials {
			return nil, fmt.Errorf("tune %q: budget: hyperband brackets from budget.min to budget.max need %.0f trials, more than %d", s.Name, n, maxTrials)
		}
		for k := top; k >= 0; k-- {
			n := int(math.Ceil(float64(top+1) / float64(k+1) * math.Pow(eta, float64(k))))
			br := Bracket{N: n, R0: b.Max / math.Pow(eta, float64(k)), Rungs: k + 1, Sync: true}
			if s.Algorithm == AlgBOHB {
				t.Brackets = append(t.Brackets, br) // trials drawn when it starts
				continue
			}
			t.add(br)
		}
	}
	return t, nil
}

// hyperbandTrials counts the trials of Hyperband's brackets 0..top.
func hyperbandTrials(top int, eta float64) float64 {
	n := 0.0
	for k := top; k >= 0 && n <= maxTrials; k-- {
		n += math.Ceil(float64(top+1) / float64(k+1) * math.Pow(eta, float64(k)))
	}
	return n
}

func (t *Tuner) add(b Bracket) {
	b.First, b.Started = len(t.Trials), true
	bi := len(t.Brackets)
	t.Brackets = append(t.Brackets, b)
	for i := 0; i < b.N; i++ {
		id := len(t.Trials)
		c := sampleConfig(t.Spec.Params, t.Spec.Seed, id)
		if t.Spec.Sampler == "grid" {
			c = gridConfig(t.Spec.Params, id%gridSize(t.Spec.Params))
		}
		t.Trials = append(t.Trials, Trial{ID: id, Bracket: bi, Config: c, Status: Pending})
	}
}

// RungBudget is the cumulative budget at rung r of bracket b.
func (t *Tuner) RungBudget(b, r int) float64 {
	br := t.Brackets[b]
	if r >= br.Rungs-1 {
		return t.Spec.Budget.Max
	}
	v := br.R0 * math.Pow(t.Spec.Budget.Reduction, float64(r))
	if t.Spec.Budget.Unit == "steps" {
		v = math.Ceil(v - 1e-9)
	}
	return min(v, t.Spec.Budget.Max)
}

// Report records a running trial's metric at the end of its rung.
func (t *Tuner) Report(id int, metric float64) error {
	tr, err := t.running(id)
	if err != nil {
		return err
	}
	tr.Metrics = append(tr.Metrics, metric)
	tr.Status = Paused
	if tr.Rung >= t.Brackets[tr.Bracket].Rungs-1 {
		tr.Status = Done
	}
	return nil
}

// Fail marks a running trial failed: it ranks last and is never promoted.
func (t *Tuner) Fail(id int, why string) error {
	tr, err := t.running(id)
	if err != nil {
		return err
	}
	tr.Metrics = append(tr.Metrics, math.NaN())
	tr.Status, tr.Note = Failed, why
	return nil
}

func (t *Tuner) running(id int) (*Trial, error) {
	if id < 0 || id >= len(t.Trials) {
		return nil, fmt.Errorf("no trial %d", id)
	}
	tr := &t.Trials[id]
	if tr.Status != Running {
		return nil, fmt.Errorf("trial %d is %s, not running", id, tr.Status)
	}
	return tr, nil
}

// Finished reports whether no trial runs or can still be run.
func (t *Tuner) Finished() bool {
	for _, b := range t.Brackets {
		if !b.Started {
			return false
		}
	}
	for i := range t.Trials {
		switch t.Trials[i].Status {
		case Pending, Running, Paused:
			return false
		}
	}
	return true
}

// Best is the trial with the best metric at the highest rung any trial
// reached (earlier rungs are not comparable), ties to the lower ID.
func (t *Tuner) Best() (Trial, bool) {
	best := -1
	for i := range t.Trials {
		tr := &t.Trials[i]
		m := tr.Last()
		if math.IsNaN(m) {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := &t.Trials[best]
		if t.RungBudget(tr.Bracket, len(tr.Metrics)-1) > t.RungBudget(b.Bracket, len(b.Metrics)-1) ||
			(t.RungBudget(tr.Bracket, len(tr.Metrics)-1) == t.RungBudget(b.Bracket, len(b.Metrics)-1) && t.better(m, b.Last())) {
			best = i
		}
	}
	if best < 0 {
		return Trial{}, false
	}
	return t.Trials[best], true
}

// better reports whether metric a beats b (NaN loses to everything).
func (t *Tuner) better(a, b float64) bool {
	switch {
	case math.IsNaN(a):
		return false
	case math.IsNaN(b):
		return true
	case t.Spec.Mode == "max":
		return a > b
	}
	return a < b
}

// ranked sorts trial IDs best first by their metric at rung r.
func (t *Tuner) ranked(ids []int, r int) []int {
	sort.SliceStable(ids, func(i, j int) bool {
		a, b := t.Trials[ids[i]].Metrics[r], t.Trials[ids[j]].Metrics[r]
		if t.better(a, b) {
			return true
		}
		if t.better(b, a) {
			return false
		}
		return ids[i] < ids[j]
	})
	return ids
}
