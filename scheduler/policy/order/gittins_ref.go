package order

import (
	"fmt"
	"math"
	"slices"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// GittinsRef is 2D-Gittins as the Tiresias reference simulator runs it
// (run_sim.py --schedule=dlas-gpu-gittins): the queues of 2D-LAS, and
// inside each queue every job, running or waiting, ranked by its Gittins
// index (highest first, then earliest submission), so a waiting job with a
// better index preempts a running one of the same queue. The index comes
// from the prior samples alone (the reference does not learn finished
// jobs), evaluated as the reference does: at whole GPU-seconds of service,
// as a step function over the samples (the index at the first sample above
// the service, taken one second below that sample), rounded as it rounds.
//
// Gittins, Caravan's default, keeps running jobs first inside a queue (a
// job is only preempted by a higher queue) and learns every finished job.
type GittinsRef struct {
	q     *queues
	data  []float64 // sorted prior samples
	index []float64 // the reference's index at data[i]−1
	sc    scratch
}

// NewGittinsRef builds the reference's 2D-Gittins; it needs a prior.
func NewGittinsRef(cfg GittinsConfig) (*GittinsRef, error) {
	q, cfg, err := cfg.queues()
	if err != nil {
		return nil, err
	}
	var data []float64
	for _, v := range cfg.Prior {
		if v >= 0 && !math.IsInf(v, 0) {
			data = append(data, math.Trunc(v)) // the reference reads integers
		}
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("the reference's 2D-Gittins needs prior samples (GittinsPrior)")
	}
	slices.Sort(data)
	g := &GittinsRef{q: q, data: data, index: make([]float64, len(data))}
	for i, v := range data {
		g.index[i] = refGittins(data, v-1, cfg.Delta)
	}
	return g, nil
}

// refGittins is the reference's cal_r_gittins_index: P/E scaled by 10⁶,
// with P and E rounded to 5 decimals and the result to 4.
func refGittins(data []float64, a, delta float64) float64 {
	n := len(data)
	last := data[n-1] - 1
	if a > last {
		return 0
	}
	lo := upper(data, a)
	hi := n - 1
	if a+delta <= last {
		hi = upper(data, a+delta)
	}
	sum := 0.0
	for _, v := range data[lo:hi] {
		sum += v
	}
	p := roundTo(float64(hi-lo)/float64(n-lo), 5)
	e := roundTo((sum+delta*float64(n-hi))/float64(n-lo), 5)
	if e == 0 {
		return 0
	}
	return roundTo(p*1e6/e, 4)
}

func roundTo(x float64, digits int) float64 {
	s := math.Pow(10, float64(digits))
	return math.RoundToEven(x*s) / s
}

// Index is the reference's index at attained service a (get_gittins_index).
func (g *GittinsRef) Index(a policy.Seconds) float64 {
	a = math.Trunc(a)
	i := upper(g.data, a)
	if i == len(g.data) { // past the largest sample
		return 0
	}
	return g.index[i]
}

// Name is "tiresias-gittins-ref".
func (*GittinsRef) Name() string { return "tiresias-gittins-ref" }

// Preemptive is true.
func (*GittinsRef) Preemptive() bool { return true }

// Queues is the number of priority queues.
func (g *GittinsRef) Queues() int { return g.q.Queues() }

// Order ranks by queue, then index (highest first), then submission.
func (o *GittinsRef) Order(s *policy.Snapshot) []policy.Ranked {
	js := o.sc.active(s)
	svc := o.q.update(s.Now, js)
	ks := o.sc.keys(len(js))
	for i, j := range js {
		ks[i] = keyed{job: j, queue: int32(o.q.queueOf(svc[i])), k: [3]float64{-o.Index(svc[i]), j.Submit}}
	}
	return o.sc.sortIncremental(ks, s.SubmitOrdered)
}

// NextChange is when the queues next change (see queues.nextChange): the
// reference, too, re-ranks only at events and demotions.
func (o *GittinsRef) NextChange(s *policy.Snapshot) policy.Seconds {
	return o.q.nextChange(s.Now, s.Jobs)
}
