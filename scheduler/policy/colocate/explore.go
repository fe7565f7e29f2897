package colocate

import (
	"errors"
	"fmt"
	"math"

	"github.com/caravan-dl/caravan/scheduler/profile"
)

// Explore is learning that also accepts. A live scheduler sees a shared
// job's speed in its progress, so a run may measure what it tries: a pair
// of job types no measurement has judged yet may share a GPU on trial, for
// a probe window; then its measured slowdowns decide. Over the bound, the
// newcomer is sent back to the front of the queue (its work during the
// probe is lost and it repeats Restart seconds of work, as a job restarted
// from the checkpoint it joined with does); within it, the pair stays and
// the type pair is known good from then on. Which unjudged pairs are worth
// a probe is decided optimistically: by the smallest slowdown measured so
// far for the same pair of models (at any batch sizes), else by the
// held-out predictor's estimate.
type Explore struct {
	// Window is how long a probe runs before its measurement decides
	// (seconds; default 300).
	Window float64
	// Restart is the work an evicted newcomer repeats on restart beyond
	// what it lost in the probe (seconds; default 60: reload and warm-up).
	Restart float64
	// Factor: a pair is probed when its optimistic estimate is at most
	// Bound × Factor (default 1.5: a held-out prediction errs by 15–45 %
	// at the median, so a pair predicted up to half again over the bound
	// may still be under it).
	Factor float64
	// MaxInFlight caps probes running at once (default a quarter of the
	// GPUs, at least 1).
	MaxInFlight int
	// NoModelPrior ignores what other batch sizes of the same pair of
	// models measured: every unjudged pair is estimated by the predictor
	// (an ablation).
	NoModelPrior bool
}

// DefaultExplore has the defaults above; the GPU count sets MaxInFlight.
func DefaultExplore() Explore { return Explore{Window: 300, Restart: 60, Factor: 1.5} }

func (e Explore) validate() error {
	switch {
	case !(e.Window > 0):
		return fmt.Errorf("colocate: explore window %v must be > 0", e.Window)
	case !(e.Restart >= 0):
		return fmt.Errorf("colocate: explore restart cost %v must be ≥ 0", e.Restart)
	case !(e.Factor >= 1):
		return fmt.Errorf("colocate: explore factor %v must be ≥ 1", e.Factor)
	case e.MaxInFlight < 0:
		return errors.New("colocate: explore max in flight must be ≥ 0")
	}
	return nil
}

// coloc is one co-location: who joined whom, when, with how much work
// the newcomer had then, whether it measures over the bound, and when its
// probe window ends (+Inf for a co-location that is no probe).
type coloc struct {
	resident, newcomer *running
	start, end, work   float64
	over, probe        bool
	judged             bool // a probe's measurement was read
}

// endColoc closes a co-location (a job finished or was evicted): its time
// over the bound is counted, and a probe still open is judged now.
func (s *run) endColoc(c *coloc) {
	c.resident.co, c.newcomer.co = nil, nil
	if c.probe && !c.judged {
		s.ex.judge(c)
	}
	if !c.over {
		return
	}
	d := s.now - c.start
	if c.probe {
		s.out.ProbeOverSeconds += d
		d = math.Max(0, s.now-c.end)
	}
	s.out.SustainedOverSeconds += d
}

// endProbe is a probe's window running out: its measurement decides.
func (s *run) endProbe(c *coloc) {
	s.ex.judge(c)
	if !c.over {
		return // kept: a sustained co-location from now on
	}
	n := c.newcomer
	s.heap.remove(n)
	s.leave(n)
	s.left[n.job] = c.work + s.ex.cfg.Restart
	s.queue = append([]*ExperimentJob{n.job}, s.queue...)
	s.out.Evictions++
}

// verdict is what a run knows of a pair of job types.
type verdict int8

const (
	unjudged verdict = iota
	good
	bad
)

// explorer is Explore's state in one run.
type explorer struct {
	cfg    Explore
	x      Experiment
	known  map[[2]profile.GavelType]verdict
	best   modelPrior
	probes []*coloc // in flight
	tried  map[[2]profile.GavelType]int
}

func newExplorer(x Experiment, rule Rule) *explorer {
	if x.Explore == nil || rule != Predicted {
		return nil
	}
	cfg := *x.Explore
	if cfg.MaxInFlight == 0 {
		cfg.MaxInFlight = max(1, x.GPUs/4)
	}
	return &explorer{cfg: cfg, x: x, known: map[[2]profile.GavelType]verdict{}, best: modelPrior{},
		tried: map[[2]profile.GavelType]int{}}
}

func typeKey(a, b profile.GavelType) [2]profile.GavelType {
	if b.String() < a.String() {
		a, b = b, a
	}
	return [2]profile.GavelType{a, b}
}

// next is the probe whose window ends first, and when (+Inf for none).
func (e *explorer) next() (*coloc, float64) {
	if e == nil {
		return nil, math.Inf(1)
	}
	var first *coloc
	t := math.Inf(1)
	for _, c := range e.probes {
		if c.end < t {
			first, t = c, c.end
		}
	}
	return first, t
}

// begin makes a co-location of an unjudged type pair a probe.
func (e *explorer) begin(s *run, c *coloc) {
	k := typeKey(c.resident.job.Type, c.newcomer.job.Type)
	if e.known[k] != unjudged {
		return
	}
	c.probe, c.end = true, s.now+e.cfg.Window
	e.probes = append(e.probes, c)
	e.tried[k]++
	s.out.Probes++
	if c.over {
		s.out.ProbesOver++
	}
}

// judge records a probe's measurement and takes it out of flight.
func (e *explorer) judge(c *coloc) {
	c.judged = true
	for i, p := range e.probes {
		if p == c {
			e.probes = append(e.probes[:i], e.probes[i+1:]...)
			break
		}
	}
	a, b := c.resident.job.Type, c.newcomer.job.Type
	v := good
	if c.over {
		v = bad
	}
	e.known[typeKey(a, b)] = v
	sa, sb, _ := e.x.Gavel.Slowdowns(e.x.GPU, a, b)
	e.best.record(a.Model, b.Model, math.Max(sa, sb))
}

// modelPrior is the smallest measured max slowdown of each pair of
// models' judged type pairs (any batch sizes): exploration's optimistic
// prior for the pair's other type pairs.
type modelPrior map[[2]string]float64

func (m modelPrior) record(a, b string, worst float64) {
	k := pairKey(a, b)
	if old, ok := m[k]; !ok || worst < old {
		m[k] = worst
	}
}

// estimate is the optimistic slowdown of j beside r: the best the pair of
// models measured at any batch sizes, else the predictor's larger side.
func (e *explorer) estimate(j, r *ExperimentJob) float64 {
	if v, ok := e.best[pairKey(j.Type.Model, r.Type.Model)]; ok && !e.cfg.NoModelPrior {
		return v
	}
	return math.Max(e.x.Predictor.Slowdown(j.Job, r.Job), e.x.Predictor.Slowdown(r.Job, j.Job))
}

// pick is where j may go when no GPU is idle: beside a job whose type
// pair measured good (first in GPU order), else, with a probe slot free,
// beside the job whose unjudged, not-in-flight pair has the lowest
// optimistic estimate within Bound × Factor.
func (e *explorer) pick(s *run, j *ExperimentJob) (int, *running) {
	probe, bestEst := -1, e.x.Bound*e.cfg.Factor+1e-9
	free := len(e.probes) < e.cfg.MaxInFlight
	for g, on := range s.onGPU {
		if len(on) != 1 {
			continue
		}
		r := on[0].job
		if _, _, ok := e.x.Gavel.Slowdowns(e.x.GPU, j.Type, r.Type); !ok {
			continue
		}
		switch e.known[typeKey(j.Type, r.Type)] {
		case good:
			return g, on[0]
		case unjudged:
			if free && !e.inFlight(j.Type, r.Type) {
				if est := e.estimate(j, r); est < bestEst {
					probe, bestEst = g, est
				}
			}
		}
	}
	if probe < 0 {
		return -1, nil
	}
	return probe, s.onGPU[probe][0]
}

func (e *explorer) inFlight(a, b profile.GavelType) bool {
	k := typeKey(a, b)
	for _, c := range e.probes {
		if typeKey(c.resident.job.Type, c.newcomer.job.Type) == k {
			return true
		}
	}
	return false
}
