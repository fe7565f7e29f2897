package optimus

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

func newOptimus(t *testing.T) *Optimus {
	t.Helper()
	o, err := New(Config{}, place.NewConsolidated())
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func elastic(id string, oracle float64) *policy.Job {
	j := pt.Job(id, 1, 0)
	j.MinWorkers, j.MaxWorkers, j.OracleDuration = 1, 3, oracle
	j.StepTimes = map[int]policy.Seconds{1: 1}
	return j
}

func workers(d policy.Decision) map[string]int {
	out := map[string]int{}
	for _, s := range d.Starts {
		out[s.JobID] = len(s.Placement.Slots)
	}
	return out
}

// With T(w) = 0.9/w + 0.1 s/step (one observation, 90% parallel prior),
// a second worker saves 45% of the remaining time: 4500 s for long
// (10000 s left) but 450 s for short (1000 s left). The spare GPU goes to long.
func TestMarginalGPUGoesToLargestGain(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 1, GPUsPerNode: 3})
	s := &policy.Snapshot{Now: 1, Cluster: cl, Jobs: []*policy.Job{elastic("short", 1000), elastic("long", 10000)}}
	d := newOptimus(t).Decide(s)
	if err := pt.Check(s, d); err != nil {
		t.Fatal(err)
	}
	if w := workers(d); w["long"] != 2 || w["short"] != 1 {
		t.Fatalf("workers %v, want long 2 and short 1", w)
	}
}

func TestRunningElasticJobGrows(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 1, GPUsPerNode: 4})
	j := elastic("j", 10000)
	j.MaxWorkers = 4
	pt.Run(&cl, j, pt.Whole("r0n0", 16384, 0))
	s := &policy.Snapshot{Now: 1, Cluster: cl, Jobs: []*policy.Job{j}}
	d := newOptimus(t).Decide(s)
	if err := pt.Check(s, d); err != nil {
		t.Fatal(err)
	}
	if w := workers(d); w["j"] != 4 {
		t.Fatalf("idle GPUs should grow j to 4 workers, got %v", w)
	}
}

func TestFixedJobsWaitWithReason(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 1, GPUsPerNode: 2})
	a, b, huge := pt.Job("a", 2, 0), pt.Job("b", 2, 1), pt.Job("huge", 9, 0)
	a.OracleDuration, b.OracleDuration = 100, 50
	s := &policy.Snapshot{Now: 5, Cluster: cl, Jobs: []*policy.Job{a, b, huge}}
	d := newOptimus(t).Decide(s)
	if err := pt.Check(s, d); err != nil {
		t.Fatal(err)
	}
	if w := workers(d); len(w) != 1 || w["b"] != 2 {
		t.Fatalf("b has less work left and should start alone, got %v", w)
	}
	if d.Waiting.Reason("a") == "" || d.Waiting.Reason("huge") != "can never fit: needs 9 GPUs, cluster has 2 GPUs" {
		t.Fatalf("waiting %v", d.Waiting)
	}
}

func TestEstimateFromConvergence(t *testing.T) {
	truth := Curve{B0: 0.002, B1: 0.5, B2: 0.3}
	j := pt.Job("conv", 1, 0)
	j.TargetLoss = 0.4 // reached at step 4750
	for k := 0.0; k <= 2000; k += 100 {
		j.Progress = append(j.Progress, policy.ProgressPoint{Step: k, Loss: truth.Loss(k)})
	}
	e := newOptimus(t).estimateOf(j)
	if e.how != "fitted convergence" || math.Abs(e.steps-2750) > 10 {
		t.Fatalf("estimate %+v, want ≈2750 steps left by the fitted curve", e)
	}
}

// TestAdmissionOrderIsStableSort: the radix admission order equals
// sort.Stable over byCost, with many tied costs and submit times.
func TestAdmissionOrderIsStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var b buffers
	for trial := 0; trial < 50; trial++ {
		var es []*entry
		for i := 0; i < 200; i++ {
			j := &policy.Job{ID: fmt.Sprintf("j%03d", rng.IntN(1000)), Submit: float64(rng.IntN(5)), State: policy.Queued}
			es = append(es, &entry{job: j, lo: 1 + rng.IntN(3), frac: 1, est: estimate{steps: float64(rng.IntN(4)), speed: Speed{C0: 1}}})
		}
		want := byCost{}
		for _, e := range es {
			want.es = append(want.es, e)
			want.cost = append(want.cost, e.est.remaining(e.lo)*float64(e.lo)*e.frac)
		}
		sort.Stable(want)
		got := b.admissionOrder(es)
		for i := range got {
			if got[i] != want.es[i] {
				t.Fatalf("trial %d: position %d is %s, want %s", trial, i, got[i].job.ID, want.es[i].job.ID)
			}
		}
	}
}
