package colocate

import (
	"container/heap"
	"errors"
	"math"
	"math/rand"
	"sort"

	"github.com/caravan-dl/caravan/scheduler/profile"
)

// Rule decides whether a job may join a GPU where another already runs.
type Rule string

// The co-location rules compared.
const (
	Exclusive Rule = "exclusive" // one job per GPU
	Naive     Rule = "naive"     // any pair that can run together
	Predicted Rule = "predicted" // both predicted slowdowns ≤ bound
	Oracle    Rule = "oracle"    // both measured slowdowns ≤ bound
)

// ExperimentJob is one single-GPU job of the workload: a Gavel type, its
// submit time and its run time alone (seconds).
type ExperimentJob struct {
	Type     profile.GavelType
	Job      Job
	Submit   float64
	Duration float64
}

// Outcome is what one rule achieved on the workload.
type Outcome struct {
	Rule          Rule
	Makespan      float64
	AvgJCT        float64
	AvgWait       float64
	Colocations   int
	OverBound     int     // co-locations where a job measured above the bound
	WorstSlowdown float64 // the largest measured slowdown any job ran at
	// Probes are co-locations Explore started on trial (counted in
	// Colocations too); ProbesOver of them measured above the bound.
	Probes, ProbesOver int
	// ProbeOverSeconds is the time over-bound probes ran together;
	// SustainedOverSeconds the time over-bound pairs stayed together past
	// their probe window (all of it for a co-location that was no probe).
	ProbeOverSeconds, SustainedOverSeconds float64
	// Evictions are newcomers Explore sent back to the queue.
	Evictions int
}

// SustainedOver are the over-bound co-locations that were not probes.
func (o Outcome) SustainedOver() int { return o.OverBound - o.ProbesOver }

// Experiment runs a workload on GPUs under one rule: FIFO order, a job
// takes an idle GPU if there is one, else joins a GPU holding one job if
// the rule allows; jobs never move once placed. Speeds come from Gavel's
// measurements (alone ÷ measured slowdown), never from the predictor.
type Experiment struct {
	Gavel     *profile.Gavel
	GPU       string
	GPUs      int
	Bound     float64
	Predictor Slowdowner
	// BestPartner joins the allowed GPU whose pair the rule judges fastest
	// together (Horus' greedy), not the first allowed one.
	BestPartner bool
	// Learn lets the predicted rule remember what it saw: once two job
	// types have shared a GPU in the run, their measured slowdowns decide
	// for that pair of types from then on (as a live scheduler sees a
	// shared job's speed in its progress), the predictor only pairs never
	// seen together. Nothing is known before the run.
	Learn bool
	// Explore, when set, lets the predicted rule try pairs no measurement
	// has judged yet, each for a bounded probe window (see Explore).
	Explore *Explore
}

// Run plays the workload under rule.
func (x Experiment) Run(jobs []ExperimentJob, rule Rule) (Outcome, error) {
	if x.GPUs < 1 || len(jobs) == 0 {
		return Outcome{}, errors.New("colocate: experiment needs GPUs and jobs")
	}
	if rule == Predicted && x.Predictor == nil {
		return Outcome{}, errors.New("colocate: the predicted rule needs a predictor")
	}
	if x.Explore != nil {
		if err := x.Explore.validate(); err != nil {
			return Outcome{}, err
		}
	}
	s := newRun(x, rule, jobs)
	s.play()
	return s.outcome(), nil
}

// allowed says whether job j may join running job r under the rule.
func (x Experiment) allowed(rule Rule, j, r *ExperimentJob) bool {
	sj, sr, ok := x.Gavel.Slowdowns(x.GPU, j.Type, r.Type)
	switch rule {
	case Naive:
		return ok
	case Oracle:
		return ok && sj <= x.Bound && sr <= x.Bound
	case Predicted:
		return ok && x.Predictor.Slowdown(j.Job, r.Job) <= x.Bound && x.Predictor.Slowdown(r.Job, j.Job) <= x.Bound
	}
	return false
}

// ---- the event loop --------------------------------------------------------

type running struct {
	job       *ExperimentJob
	gpu       int
	remaining float64 // seconds of work alone
	speed     float64 // work seconds per second (1 alone)
	index     int
	finish    float64
	co        *coloc // the co-location it is in, if any
}

type runHeap []*running

func (h runHeap) Len() int            { return len(h) }
func (h runHeap) Less(i, j int) bool  { return h[i].finish < h[j].finish }
func (h runHeap) Swap(i, j int)       { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *runHeap) Push(v any)         { r := v.(*running); r.index = len(*h); *h = append(*h, r) }
func (h *runHeap) Pop() any           { old := *h; r := old[len(old)-1]; *h = old[:len(old)-1]; return r }
func (h runHeap) peek() *running      { return h[0] }
func (h *runHeap) fix(r *running)     { heap.Fix(h, r.index) }
func (h *runHeap) add(r *running)     { heap.Push(h, r) }
func (h *runHeap) popMin() *running   { return heap.Pop(h).(*running) }
func (h *runHeap) remove(r *running)  { heap.Remove(h, r.index) }
func newRunHeap() *runHeap            { h := runHeap{}; return &h }
func (h runHeap) empty() bool         { return len(h) == 0 }
func (r *running) advance(dt float64) { r.remaining -= dt * r.speed }

type run struct {
	x       Experiment
	rule    Rule
	jobs    []ExperimentJob
	next    int // next job to arrive
	queue   []*ExperimentJob
	onGPU   [][]*running
	heap    *runHeap
	now     float64
	last    float64                       // time the running jobs were last advanced to
	seen    map[[2]profile.GavelType]bool // type pairs that shared (Learn)
	started map[*ExperimentJob]float64
	done    map[*ExperimentJob]float64
	left    map[*ExperimentJob]float64 // work left of a job sent back to the queue
	ex      *explorer                  // Explore's state (nil without it)
	check   func(*run)                 // tests: called after each event (nil otherwise)
	out     Outcome
}

func newRun(x Experiment, rule Rule, jobs []ExperimentJob) *run {
	sorted := append([]ExperimentJob(nil), jobs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Submit < sorted[j].Submit })
	return &run{x: x, rule: rule, jobs: sorted, onGPU: make([][]*running, x.GPUs), heap: newRunHeap(),
		seen: map[[2]profile.GavelType]bool{}, started: map[*ExperimentJob]float64{}, done: map[*ExperimentJob]float64{},
		left: map[*ExperimentJob]float64{}, ex: newExplorer(x, rule), out: Outcome{Rule: rule, WorstSlowdown: 1}}
}

func (s *run) play() {
	for s.next < len(s.jobs) || !s.heap.empty() || len(s.queue) > 0 {
		tArrive, tFinish := math.Inf(1), math.Inf(1)
		if s.next < len(s.jobs) {
			tArrive = s.jobs[s.next].Submit
		}
		if !s.heap.empty() {
			tFinish = s.heap.peek().finish
		}
		p, tProbe := s.ex.next()
		if math.IsInf(tArrive, 1) && math.IsInf(tFinish, 1) {
			return // queued jobs no rule can place: cannot happen with ≥ 1 GPU
		}
		s.advanceTo(math.Min(tArrive, math.Min(tFinish, tProbe)))
		switch {
		case tFinish <= tArrive && tFinish <= tProbe:
			s.finish(s.heap.popMin())
		case tProbe <= tArrive:
			s.endProbe(p)
		default:
			s.queue = append(s.queue, &s.jobs[s.next])
			s.next++
		}
		s.schedule()
		if s.check != nil {
			s.check(s)
		}
	}
}

func (s *run) advanceTo(t float64) {
	for _, r := range *s.heap {
		r.advance(t - s.last)
	}
	s.now, s.last = t, t
}

func (s *run) finish(r *running) {
	s.done[r.job] = s.now
	s.leave(r)
}

// leave takes r off its GPU, ends its co-location (the partner runs
// alone again) and records what a probe of it measured.
func (s *run) leave(r *running) {
	g := s.onGPU[r.gpu]
	for i, o := range g {
		if o == r {
			s.onGPU[r.gpu] = append(g[:i], g[i+1:]...)
			break
		}
	}
	if r.co != nil {
		s.endColoc(r.co)
	}
	for _, o := range s.onGPU[r.gpu] {
		s.setSpeed(o, 1)
	}
}

// schedule places queued jobs in FIFO order; the head blocks when it fits
// nowhere, as a FIFO queue does.
func (s *run) schedule() {
	for len(s.queue) > 0 {
		j := s.queue[0]
		gpu, partner := s.pick(j)
		if gpu < 0 {
			return
		}
		s.queue = s.queue[1:]
		s.start(j, gpu, partner)
	}
}

// pick is an idle GPU, else a GPU with one job the rule lets j join (the
// one whose pair has the lowest measured-or-predicted cost is not known to
// FIFO: the first allowed, in GPU order).
func (s *run) pick(j *ExperimentJob) (int, *running) {
	for g, on := range s.onGPU {
		if len(on) == 0 {
			return g, nil
		}
	}
	if s.rule == Exclusive {
		return -1, nil
	}
	if s.ex != nil {
		return s.ex.pick(s, j)
	}
	best, bestGain := -1, math.Inf(-1)
	for g, on := range s.onGPU {
		if len(on) != 1 || !s.allowed(j, on[0].job) {
			continue
		}
		if !s.x.BestPartner {
			return g, on[0]
		}
		if gain := s.x.pairGain(s.rule, j, on[0].job); gain > bestGain+1e-12 {
			best, bestGain = g, gain
		}
	}
	if best < 0 {
		return -1, nil
	}
	return best, s.onGPU[best][0]
}

// allowed is the rule's verdict, or with Learn the measurement of a pair
// of types this run already co-located.
func (s *run) allowed(j, r *ExperimentJob) bool {
	if s.rule == Predicted && s.x.Learn && s.seen[[2]profile.GavelType{j.Type, r.Type}] {
		return s.x.allowed(Oracle, j, r)
	}
	return s.x.allowed(s.rule, j, r)
}

// pairGain is the pair's combined speed (1/sa + 1/sb) as the rule sees it:
// measured for the oracle, predicted for the predicted rule; naive knows
// nothing, so every pair is alike.
func (x Experiment) pairGain(rule Rule, j, r *ExperimentJob) float64 {
	switch rule {
	case Oracle:
		sj, sr, _ := x.Gavel.Slowdowns(x.GPU, j.Type, r.Type)
		return 1/sj + 1/sr
	case Predicted:
		return 1/x.Predictor.Slowdown(j.Job, r.Job) + 1/x.Predictor.Slowdown(r.Job, j.Job)
	}
	return 0
}

func (s *run) start(j *ExperimentJob, gpu int, partner *running) {
	s.started[j] = s.now
	work, ok := s.left[j]
	if !ok {
		work = j.Duration
	}
	delete(s.left, j)
	r := &running{job: j, gpu: gpu, remaining: work, finish: math.Inf(1)}
	s.onGPU[gpu] = append(s.onGPU[gpu], r)
	s.heap.add(r)
	if partner == nil {
		s.setSpeed(r, 1)
		return
	}
	sj, sp, _ := s.x.Gavel.Slowdowns(s.x.GPU, j.Type, partner.job.Type)
	s.seen[[2]profile.GavelType{j.Type, partner.job.Type}] = true
	s.seen[[2]profile.GavelType{partner.job.Type, j.Type}] = true
	s.out.Colocations++
	co := &coloc{resident: partner, newcomer: r, start: s.now, work: work, over: sj > s.x.Bound || sp > s.x.Bound, end: math.Inf(1)}
	r.co, partner.co = co, co
	if s.ex != nil {
		s.ex.begin(s, co)
	}
	if co.over {
		s.out.OverBound++
	}
	s.out.WorstSlowdown = math.Max(s.out.WorstSlowdown, math.Max(sj, sp))
	s.setSpeed(r, 1/sj)
	s.setSpeed(partner, 1/sp)
}

func (s *run) setSpeed(r *running, speed float64) {
	r.speed = speed
	r.finish = s.now + r.remaining/speed
	s.heap.fix(r)
}

func (s *run) outcome() Outcome {
	o := s.out
	for i := range s.jobs {
		j := &s.jobs[i]
		o.Makespan = math.Max(o.Makespan, s.done[j])
		o.AvgJCT += (s.done[j] - j.Submit) / float64(len(s.jobs))
		o.AvgWait += (s.started[j] - j.Submit) / float64(len(s.jobs))
	}
	return o
}

// Workload draws n single-GPU jobs of the GPU type's measured job types:
// types uniformly, run times from durations (seconds, e.g. Philly's
// single-GPU jobs), Poisson arrivals at the rate that offers load × gpus of
// work. Seeded, so runs repeat.
func Workload(g *profile.Gavel, gpu string, graphs map[string]profile.ModelGraph, durations []float64, n, gpus int, load float64, seed int64) ([]ExperimentJob, error) {
	var types []profile.GavelType
	for _, t := range g.Types(gpu) {
		if t.Scale == 1 && g.GPUs[gpu].Alone[t] > 0 {
			types = append(types, t)
		}
	}
	if len(types) == 0 || len(durations) == 0 || n < 1 || gpus < 1 || !(load > 0) {
		return nil, errors.New("colocate: workload needs job types, durations, n, gpus and a positive load")
	}
	rng := rand.New(rand.NewSource(seed))
	mean := 0.0
	for _, d := range durations {
		mean += d / float64(len(durations))
	}
	rate := load * float64(gpus) / mean
	jobs := make([]ExperimentJob, n)
	t := 0.0
	for i := range jobs {
		ty := types[rng.Intn(len(types))]
		j, err := GavelJob(ty, graphs)
		if err != nil {
			return nil, err
		}
		j.GPU = gpu
		jobs[i] = ExperimentJob{Type: ty, Job: j, Submit: t, Duration: durations[rng.Intn(len(durations))]}
		t += rng.ExpFloat64() / rate
	}
	return jobs, nil
}
