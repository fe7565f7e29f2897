package sim

import (
	"math"
	"sort"
)

// JobResult is one finished job.
type JobResult struct {
	ID          string  `json:"id"`
	GPUs        int     `json:"gpus"`
	Fraction    float64 `json:"fraction"`
	Model       string  `json:"model,omitempty"`
	Submit      float64 `json:"submit"`
	Start       float64 `json:"start"`
	Finish      float64 `json:"finish"`
	Duration    float64 `json:"duration"` // recorded run time (work)
	JCT         float64 `json:"jct"`
	Queueing    float64 `json:"queueing"` // first start − submit
	Preemptions int     `json:"preemptions"`
	// FTF is finish-time fairness ρ = JCT / Duration (see Metrics).
	FTF float64 `json:"ftf"`
}

// Unfit is a job the run could never place.
type Unfit struct {
	ID     string `json:"id"`
	GPUs   int    `json:"gpus"`
	Reason string `json:"reason"`
}

// Result is everything a run produced.
type Result struct {
	Policy    string   `json:"policy"`
	Trace     string   `json:"trace,omitempty"`
	TotalGPUs int      `json:"total_gpus"`
	Metrics   Metrics  `json:"metrics"`
	Buckets   []Bucket `json:"buckets"`
	Unfit     []Unfit  `json:"unfit"`
	// Colocations says which interference model set how many co-locations.
	Colocations Colocations `json:"colocations"`
	Jobs        []JobResult `json:"-"`
	Series      []Sample    `json:"-"`
}

func (e *engine) jobResult(j *simJob) JobResult {
	r := JobResult{
		ID: j.pj.ID, GPUs: j.spec.GPUs, Fraction: j.spec.Fraction, Model: j.spec.Model,
		Submit: j.spec.Submit, Start: j.firstStart, Finish: j.finish, Duration: j.spec.Work,
		JCT: j.finish - j.spec.Submit, Queueing: j.firstStart - j.spec.Submit, Preemptions: j.pj.Preemptions,
	}
	r.FTF = r.JCT / max(r.Duration, 1)
	return r
}

func (e *engine) finishResult() {
	sort.SliceStable(e.res.Jobs, func(a, b int) bool {
		x, y := e.res.Jobs[a], e.res.Jobs[b]
		if x.Submit != y.Submit {
			return x.Submit < y.Submit
		}
		return x.ID < y.ID
	})
	e.res.Series = e.rec.series
	e.res.Metrics = computeMetrics(e.res.Jobs, e.res.TotalGPUs, e.rec)
	e.res.Metrics.Decisions = e.events
	e.res.Metrics.Unfit = len(e.res.Unfit)
	e.res.Buckets = buckets(e.res.Jobs)
}

// Metrics summarise a run. Times are seconds.
type Metrics struct {
	Jobs        int     `json:"jobs"`
	AvgJCT      float64 `json:"avg_jct"`
	MedianJCT   float64 `json:"median_jct"`
	P95JCT      float64 `json:"p95_jct"`
	P99JCT      float64 `json:"p99_jct"`
	AvgQueue    float64 `json:"avg_queueing"`
	MedianQueue float64 `json:"median_queueing"`
	LongestWait float64 `json:"longest_wait"`
	Makespan    float64 `json:"makespan"`
	// GPUAlloc is the mean share of GPUs allocated over the makespan;
	// GPUUtil weights allocation by job speed (useful work).
	GPUAlloc float64 `json:"gpu_alloc"`
	GPUUtil  float64 `json:"gpu_util"`
	// Preemptions in total, per job on average, and the most any job had.
	Preemptions    int     `json:"preemptions"`
	PreemptPerJob  float64 `json:"preemptions_per_job"`
	MaxPreemptions int     `json:"max_preemptions"`
	// Finish-time fairness ρ = JCT / the job's uncontended run time
	// (Themis, NSDI'20, with "alone on the GPUs it asked for" as the fair
	// reference): 1 is perfect, large ρ means the job was starved.
	AvgFTF    float64 `json:"avg_ftf"`
	P99FTF    float64 `json:"p99_ftf"`
	MaxFTF    float64 `json:"max_ftf"`
	Unfit     int     `json:"unfit"`
	Decisions int     `json:"decisions"`
}

func computeMetrics(jobs []JobResult, gpus int, rec *recorder) Metrics {
	m := Metrics{Jobs: len(jobs)}
	if len(jobs) == 0 {
		return m
	}
	jct := make([]float64, len(jobs))
	q := make([]float64, len(jobs))
	ftf := make([]float64, len(jobs))
	first, last := math.Inf(1), 0.0
	for i, j := range jobs {
		jct[i], q[i], ftf[i] = j.JCT, j.Queueing, j.FTF
		first, last = min(first, j.Submit), max(last, j.Finish)
		m.Preemptions += j.Preemptions
		m.MaxPreemptions = max(m.MaxPreemptions, j.Preemptions)
	}
	m.AvgJCT, m.MedianJCT, m.P95JCT, m.P99JCT = mean(jct), quantile(jct, .5), quantile(jct, .95), quantile(jct, .99)
	m.AvgQueue, m.MedianQueue, m.LongestWait = mean(q), quantile(q, .5), quantile(q, 1)
	m.AvgFTF, m.P99FTF, m.MaxFTF = mean(ftf), quantile(ftf, .99), quantile(ftf, 1)
	m.Makespan = last - first
	m.PreemptPerJob = float64(m.Preemptions) / float64(len(jobs))
	if area := m.Makespan * float64(gpus); area > 0 {
		m.GPUAlloc, m.GPUUtil = rec.allocArea/area, rec.busyArea/area
	}
	return m
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// quantile sorts a copy and takes the nearest-rank value.
func quantile(xs []float64, p float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}
