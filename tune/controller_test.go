package tune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeCluster is an in-memory Nomad: a child job completes after `polls`
// State calls and reports loss = |lr − 0.1| + 1/steps.
type fakeCluster struct {
	mu       sync.Mutex
	polls    int
	jobs     map[string]*fakeJob
	byToken  map[string]string
	vars     map[string][]byte
	index    map[string]uint64
	dispatch int
	stopped  []string
	noMetric bool
	// flaky fails every n-th State call with a transient error (0 = never).
	flaky, calls int
	failSave     bool
}

type fakeJob struct {
	meta  map[string]string
	seen  int
	state RunState
}

func newFake(polls int) *fakeCluster {
	return &fakeCluster{polls: polls, jobs: map[string]*fakeJob{}, byToken: map[string]string{},
		vars: map[string][]byte{}, index: map[string]uint64{}}
}

func (f *fakeCluster) Dispatch(_ context.Context, job string, meta map[string]string, prefix, token string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, ok := f.byToken[token]; ok {
		return id, nil
	}
	f.dispatch++
	id := fmt.Sprintf("%s/dispatch-%s-%d", job, prefix, f.dispatch)
	f.jobs[id] = &fakeJob{meta: meta, state: RunPending}
	f.byToken[token] = id
	return id, nil
}

func (f *fakeCluster) State(_ context.Context, id string) (RunState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls++; f.flaky > 0 && f.calls%f.flaky == 0 {
		return "", errors.New("connection refused")
	}
	j := f.jobs[id]
	if j.state == RunFailed {
		return RunFailed, nil
	}
	if j.seen++; j.seen >= f.polls {
		j.state = RunComplete
	} else {
		j.state = RunRunning
	}
	return j.state, nil
}

func (f *fakeCluster) Progress(_ context.Context, id, task string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.jobs[id]
	lr, _ := strconv.ParseFloat(j.meta["lr"], 64)
	steps, _ := strconv.ParseFloat(j.meta["steps"], 64)
	var b bytes.Buffer
	for s := 10.0; s <= steps; s += 10 {
		loss := abs(lr-0.1) + 1/s
		if f.noMetric {
			fmt.Fprintf(&b, "{\"step\":%g}\n", s)
		} else {
			fmt.Fprintf(&b, "{\"step\":%g,\"loss\":%g}\n", s, loss)
		}
	}
	return b.Bytes(), nil
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func (f *fakeCluster) Reason(context.Context, string) string { return "" }

func (f *fakeCluster) Stop(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = append(f.stopped, id)
	return nil
}

func (f *fakeCluster) Load(_ context.Context, path string) ([]byte, uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.vars[path], f.index[path], nil
}

func (f *fakeCluster) Save(_ context.Context, path string, data []byte, index uint64) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failSave {
		return 0, errors.New("connection refused")
	}
	if f.index[path] != index {
		return 0, ErrStateTaken
	}
	f.vars[path] = append([]byte(nil), data...)
	f.index[path]++
	return f.index[path], nil
}

func (f *fakeCluster) List(_ context.Context, prefix string) ([]string, error) {
	var out []string
	for k := range f.vars {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out, nil
}

func liveSpec() Spec {
	s := Spec{Name: "digits", Job: "tune-digits", Metric: "loss", Algorithm: AlgSHA, Trials: 9, Seed: 3,
		Budget: Budget{Min: 20, Max: 180, Reduction: 3},
		Params: []Param{{Name: "lr", Type: ParamLogUniform, Min: 0.001, Max: 1}}}
	s.setDefaults()
	return s
}

func runToEnd(t *testing.T, ct *Controller, maxSteps int) {
	t.Helper()
	for i := 0; i < maxSteps; i++ {
		done, err := ct.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
	}
	t.Fatalf("not done after %d steps", maxSteps)
}

// TestControllerSHA: 9 trials, 3 rungs: 9 + 3 + 1 dispatches, the 8
// losers' jobs stopped, and the best trial is the lr nearest 0.1.
func TestControllerSHA(t *testing.T) {
	f := newFake(2)
	var out bytes.Buffer
	ct, err := NewController(context.Background(), f, liveSpec(), ControllerConfig{Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	runToEnd(t, ct, 100)
	best, err := ct.finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if f.dispatch != 13 || len(f.stopped) != 8 {
		t.Fatalf("%d dispatches, %d stopped", f.dispatch, len(f.stopped))
	}
	want := -1
	for _, tr := range ct.State().Tuner.Trials {
		lr, _ := strconv.ParseFloat(tr.Config["lr"], 64)
		if want < 0 || abs(lr-0.1) < abs(mustParse(ct.State().Tuner.Trials[want].Config["lr"])-0.1) {
			want = tr.ID
		}
	}
	if best.ID != want || best.Status != Done {
		t.Fatalf("best %d (%v), want %d", best.ID, best.Status, want)
	}
	if !strings.Contains(out.String(), "best: trial") {
		t.Fatalf("output %q", out.String())
	}
}

func mustParse(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// TestControllerRestart: a controller killed mid-run and a new one built
// from the saved state finish with the same best trial, dispatching no
// rung twice (the idempotency token returns the existing child).
func TestControllerRestart(t *testing.T) {
	ref := newFake(3)
	a, _ := NewController(context.Background(), ref, liveSpec(), ControllerConfig{})
	runToEnd(t, a, 200)
	want, _ := a.Tuner().Best()

	f := newFake(3)
	b, _ := NewController(context.Background(), f, liveSpec(), ControllerConfig{})
	for i := 0; i < 7; i++ {
		if _, err := b.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewController(context.Background(), f, liveSpec(), ControllerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Tuner().Spent != b.Tuner().Spent {
		t.Fatalf("restored spent %v, had %v", c.Tuner().Spent, b.Tuner().Spent)
	}
	runToEnd(t, c, 200)
	got, _ := c.Tuner().Best()
	if got.ID != want.ID || f.dispatch != ref.dispatch {
		t.Fatalf("best %d vs %d, dispatches %d vs %d", got.ID, want.ID, f.dispatch, ref.dispatch)
	}
	// The old controller's next write must fail: its index is stale.
	if _, err := b.Step(context.Background()); err == nil {
		t.Fatal("a stale controller wrote the state")
	}
}

// TestControllerMetricMissing: trials whose progress lacks the metric fail
// with an error that names it.
func TestControllerMetricMissing(t *testing.T) {
	f := newFake(1)
	f.noMetric = true
	s := liveSpec()
	s.Algorithm, s.Trials = AlgRandom, 2
	ct, _ := NewController(context.Background(), f, s, ControllerConfig{})
	runToEnd(t, ct, 20)
	for _, tr := range ct.Tuner().Trials {
		if tr.Status != Failed || !strings.Contains(tr.Note, `metric "loss" missing`) {
			t.Fatalf("trial %d: %s %q", tr.ID, tr.Status, tr.Note)
		}
	}
	if _, err := ct.finish(context.Background()); err == nil {
		t.Fatal("no best expected")
	}
}

// TestControllerRetriesTransientErrors: a Nomad that fails every third
// status read still gets the search to the same end, nothing dispatched
// twice.
func TestControllerRetriesTransientErrors(t *testing.T) {
	f := newFake(2)
	f.flaky = 3
	ct, err := NewController(context.Background(), f, liveSpec(), ControllerConfig{Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	best, err := ct.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f.dispatch != 13 || best.Status != Done {
		t.Fatalf("%d dispatches, best %+v", f.dispatch, best)
	}
}

// TestControllerGivesUp: a Nomad that takes no writes ends Run after
// MaxFailures polls with the last error.
func TestControllerGivesUp(t *testing.T) {
	f := newFake(2)
	ct, _ := NewController(context.Background(), f, liveSpec(), ControllerConfig{Poll: time.Millisecond, MaxFailures: 3})
	f.failSave = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := ct.Run(ctx); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("got %v", err)
	}
}

// TestControllerSendsBatchSize: with batch_param, every trial's meta
// carries its batch as caravan.batch_size (what the fluid policy reads);
// without, no trial gets the key (a directly dispatched template that does
// not declare it would refuse the dispatch).
func TestControllerSendsBatchSize(t *testing.T) {
	for _, param := range []string{"batch", ""} {
		s := liveSpec()
		s.Params = append(s.Params, Param{Name: "batch", Type: ParamChoice, Values: []string{"16", "64"}})
		s.BatchParam = param
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		f := newFake(1)
		ct, err := NewController(context.Background(), f, s, ControllerConfig{Out: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		runToEnd(t, ct, 100)
		for id, j := range f.jobs {
			got, ok := j.meta[MetaBatchSize]
			if param == "" && ok {
				t.Fatalf("%s: %s = %q without batch_param", id, MetaBatchSize, got)
			}
			if param != "" && (got != j.meta["batch"] || got == "") {
				t.Fatalf("%s: %s = %q, batch %q", id, MetaBatchSize, got, j.meta["batch"])
			}
		}
	}
}
