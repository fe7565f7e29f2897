package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
)

// StatePrefix is where tuning states live in Nomad Variables.
const StatePrefix = "caravan/tune/"

// ControllerConfig tunes the live controller.
type ControllerConfig struct {
	// Poll is how often trials are checked (default 1 s).
	Poll time.Duration
	// Out receives the live table and the result (nil = discard).
	Out    io.Writer
	Logger hclog.Logger
	// MaxFailures is how many failed polls in a row end Run (default 60).
	MaxFailures int
}

// Run is one dispatch of a trial: its Nomad child job for one rung.
type Run struct {
	Job    string  `json:"job"`
	Rung   int     `json:"rung"`
	Budget float64 `json:"budget"`
	Token  string  `json:"token"`
}

// State is a tuning job's whole saved state: the algorithm and, per
// trial, its current run.
type State struct {
	Tuner   *Tuner       `json:"tuner"`
	Runs    map[int]*Run `json:"runs"`
	Started time.Time    `json:"started"`
	Ended   time.Time    `json:"ended,omitzero"`
}

// Controller drives one tuning job on a Cluster. Its state is saved
// (check-and-set) after every change, so a restarted controller resumes:
// trials already dispatched are followed, not dispatched again.
type Controller struct {
	c     Cluster
	cfg   ControllerConfig
	path  string
	index uint64
	st    *State
	shown string
}

// NewController loads the saved state of spec.Name, or starts fresh.
func NewController(ctx context.Context, c Cluster, spec Spec, cfg ControllerConfig) (*Controller, error) {
	if spec.Job == "" {
		return nil, fmt.Errorf("tune %q: job: name the parameterized Nomad job that runs a trial", spec.Name)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = 60
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	ct := &Controller{c: c, cfg: cfg, path: StatePrefix + spec.Name}
	raw, idx, err := c.Load(ctx, ct.path)
	if err != nil {
		return nil, err
	}
	ct.index = idx
	if raw != nil {
		st := &State{}
		if err := json.Unmarshal(raw, st); err != nil || st.Tuner == nil {
			return nil, fmt.Errorf("saved state %s is not a tuning state: %v", ct.path, err)
		}
		if st.Runs == nil {
			st.Runs = map[int]*Run{}
		}
		ct.st = st
		cfg.Logger.Info("resuming tuning job from saved state", "name", spec.Name, "spent", st.Tuner.Spent)
		return ct, nil
	}
	t, err := NewTuner(spec)
	if err != nil {
		return nil, err
	}
	ct.st = &State{Tuner: t, Runs: map[int]*Run{}, Started: time.Now().UTC()}
	return ct, ct.save(ctx)
}

// State is the controller's current state (read-only use).
func (ct *Controller) State() *State { return ct.st }

// Run drives the tuning job until it finishes or ctx ends, and prints the
// best configuration.
func (ct *Controller) Run(ctx context.Context) (Trial, error) {
	tick := time.NewTicker(ct.cfg.Poll)
	defer tick.Stop()
	failures := 0
	for {
		done, err := ct.Step(ctx)
		switch {
		case errors.Is(err, ErrStateTaken) || ctx.Err() != nil:
			return Trial{}, errors.Join(err, ctx.Err())
		case err != nil:
			// Nomad unreachable or a leader election: the state on
			// Nomad is whole, so retry rather than abandon the search.
			if failures++; failures >= ct.cfg.MaxFailures {
				return Trial{}, fmt.Errorf("%d polls in a row failed, last: %w", failures, err)
			}
			ct.cfg.Logger.Warn("poll failed; retrying", "error", err, "failures", failures)
			if err := ct.reload(ctx); err != nil {
				ct.cfg.Logger.Warn("reload failed", "error", err)
			}
		default:
			failures = 0
		}
		ct.show()
		if done {
			return ct.finish(ctx)
		}
		select {
		case <-ctx.Done():
			return Trial{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// Step follows running trials once, feeds finished rungs to the
// algorithm, and applies its actions. It reports whether tuning is done.
func (ct *Controller) Step(ctx context.Context) (bool, error) {
	t := ct.st.Tuner
	changed := false
	for i := range t.Trials {
		tr := &t.Trials[i]
		if tr.Status != Running {
			continue
		}
		run := ct.st.Runs[tr.ID]
		if run == nil || run.Rung != tr.Rung || run.Job == "" {
			continue // decided but not dispatched yet: dispatch below
		}
		ch, err := ct.follow(ctx, tr, run)
		if err != nil { // this trial is read again next poll
			ct.cfg.Logger.Warn("could not read trial", "trial", tr.ID, "job", run.Job, "error", err)
			continue
		}
		changed = changed || ch
	}
	acts := t.Next()
	if len(acts) > 0 || changed {
		if err := ct.save(ctx); err != nil { // decisions first, then effects
			return false, err
		}
	}
	for _, a := range acts {
		if a.Op == "stop" {
			if run := ct.st.Runs[a.Trial]; run != nil && run.Job != "" {
				if err := ct.c.Stop(ctx, run.Job); err != nil {
					return false, err
				}
			}
		}
	}
	if err := ct.dispatchPending(ctx); err != nil {
		return false, err
	}
	return t.Finished(), nil
}

// follow checks one trial's run; a finished run reports its metric.
func (ct *Controller) follow(ctx context.Context, tr *Trial, run *Run) (bool, error) {
	state, err := ct.c.State(ctx, run.Job)
	if err != nil {
		return false, err
	}
	t := ct.st.Tuner
	switch state {
	case RunComplete:
		data, err := ct.c.Progress(ctx, run.Job, t.Spec.Task)
		if err != nil {
			return false, err
		}
		v, _, err := MetricAt(data, t.Spec.Metric, run.Budget)
		if err != nil {
			ct.cfg.Logger.Warn("trial failed", "trial", tr.ID, "job", run.Job, "error", err)
			return true, t.Fail(tr.ID, err.Error())
		}
		return true, t.Report(tr.ID, v)
	case RunFailed:
		why := ct.c.Reason(ctx, run.Job)
		ct.cfg.Logger.Warn("trial job failed", "trial", tr.ID, "job", run.Job, "reason", why)
		return true, t.Fail(tr.ID, "job failed: "+why)
	}
	return false, nil
}

// dispatchPending dispatches every running trial whose current rung has
// no child job yet. The idempotency token makes a dispatch retried after
// a crash return the child already made.
func (ct *Controller) dispatchPending(ctx context.Context) error {
	t := ct.st.Tuner
	for i := range t.Trials {
		tr := &t.Trials[i]
		if tr.Status != Running {
			continue
		}
		if run := ct.st.Runs[tr.ID]; run != nil && run.Rung == tr.Rung && run.Job != "" {
			continue
		}
		run := &Run{Rung: tr.Rung, Budget: tr.Budget,
			Token: fmt.Sprintf("%s-%d-%d-%d", t.Spec.Name, tr.ID, tr.Rung, ct.st.Started.Unix())}
		meta := map[string]string{}
		for k, v := range t.Spec.Meta {
			meta[k] = v
		}
		for k, v := range tr.Config {
			meta[k] = v
		}
		meta[t.Spec.Budget.Unit] = strconv.FormatFloat(tr.Budget, 'f', -1, 64)
		meta["trial"] = strconv.Itoa(tr.ID)
		if b := t.Spec.BatchParam; b != "" {
			meta[MetaBatchSize] = tr.Config[b]
		}
		ct.handOver(tr, meta)
		job, err := ct.c.Dispatch(ctx, t.Spec.Job, meta, fmt.Sprintf("t%d-r%d", tr.ID, tr.Rung), run.Token)
		if err != nil {
			return fmt.Errorf("dispatch trial %d of %s: %w", tr.ID, t.Spec.Job, err)
		}
		run.Job = job
		ct.st.Runs[tr.ID] = run
		ct.cfg.Logger.Info("dispatched trial", "trial", tr.ID, "rung", tr.Rung, "budget", tr.Budget, "job", job)
		if err := ct.save(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Meta keys of the checkpoint hand-over between a trial's rungs.
const (
	MetaCheckpoint  = "checkpoint"
	MetaResumeSteps = "resume_steps"
)

// handOver tells a run where its trial's checkpoint lives and what budget
// it holds, so a promoted trial resumes its previous rung instead of
// retraining it. Each rung is a new Nomad job (the driver's checkpoint
// dir belongs to one job), hence a path outside it, shared by the trial's
// runs; the search's start time in the path keeps a re-run of the same
// tuning name from resuming an older search's files.
func (ct *Controller) handOver(tr *Trial, meta map[string]string) {
	t := ct.st.Tuner
	if t.Spec.Checkpoint == "" {
		return
	}
	dir := fmt.Sprintf("%s-%d", t.Spec.Name, ct.st.Started.Unix())
	meta[MetaCheckpoint] = path.Join(t.Spec.Checkpoint, dir, fmt.Sprintf("trial-%d.pt", tr.ID))
	resume := 0.0
	if tr.Rung > 0 && len(tr.Metrics) >= tr.Rung {
		resume = t.RungBudget(tr.Bracket, tr.Rung-1)
	}
	meta[MetaResumeSteps] = strconv.FormatFloat(resume, 'f', -1, 64)
}

func (ct *Controller) finish(ctx context.Context) (Trial, error) {
	if ct.st.Ended.IsZero() {
		ct.st.Ended = time.Now().UTC()
		if err := ct.save(ctx); err != nil {
			return Trial{}, err
		}
	}
	best, ok := ct.st.Tuner.Best()
	if !ok {
		return Trial{}, errors.New("no trial reported the metric")
	}
	fmt.Fprintf(ct.cfg.Out, "best: trial %d %s %s = %g after %g %s (%s)\n", best.ID, formatConfig(best.Config),
		ct.st.Tuner.Spec.Metric, best.Last(), ct.st.Tuner.RungBudget(best.Bracket, len(best.Metrics)-1),
		ct.st.Tuner.Spec.Budget.Unit, ct.st.Ended.Sub(ct.st.Started).Round(time.Second))
	return best, nil
}

// ErrStateTaken means another controller wrote the state.
var ErrStateTaken = errors.New("tuning state was changed by another controller")

func (ct *Controller) save(ctx context.Context) error {
	b, err := json.Marshal(ct.st)
	if err != nil {
		return err
	}
	idx, err := ct.c.Save(ctx, ct.path, b, ct.index)
	if err != nil {
		return err
	}
	ct.index = idx
	return nil
}

// Tuner is the controller's algorithm state.
func (ct *Controller) Tuner() *Tuner { return ct.st.Tuner }

// reload replaces the in-memory state with the saved one after a failed
// poll, which may have changed the tuner without saving it.
func (ct *Controller) reload(ctx context.Context) error {
	raw, idx, err := ct.c.Load(ctx, ct.path)
	if err != nil {
		return err
	}
	if idx != ct.index {
		return ErrStateTaken
	}
	st := &State{}
	if err := json.Unmarshal(raw, st); err != nil || st.Tuner == nil {
		return fmt.Errorf("saved state %s is not a tuning state: %v", ct.path, err)
	}
	if st.Runs == nil {
		st.Runs = map[int]*Run{}
	}
	ct.st = st
	return nil
}

// LoadState reads a tuning job's saved state.
func LoadState(ctx context.Context, c Cluster, name string) (*State, error) {
	raw, _, err := c.Load(ctx, StatePrefix+name)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, fmt.Errorf("no tuning job %q", name)
	}
	st := &State{}
	if err := json.Unmarshal(raw, st); err != nil || st.Tuner == nil {
		return nil, fmt.Errorf("saved state %s%s is not a tuning state: %v", StatePrefix, name, err)
	}
	return st, nil
}
