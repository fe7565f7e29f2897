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

// TestAdmissionOrderIsStableSort: the radix admission order, and the
// order a tracked decision merges from the last one and the changed jobs,
// equal sort.Stable over (cost, submit time, ID), with many tied costs
// and submit times.
func TestAdmissionOrderIsStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	o := newOptimus(t)
	s := &policy.Snapshot{}
	for trial := 0; trial < 50; trial++ {
		renew := trial == 0 || rng.IntN(4) == 0 // every job changes
		if renew {
			s.Jobs = nil
			for i := 0; i < 200; i++ {
				s.Jobs = append(s.Jobs, &policy.Job{})
			}
			s.JobGen = make([]uint64, len(s.Jobs))
		}
		for i, j := range s.Jobs { // change some jobs
			if renew || rng.IntN(10) == 0 {
				*j = policy.Job{ID: fmt.Sprintf("j%03d", rng.IntN(1000)), Submit: float64(rng.IntN(5)), State: policy.Queued}
				s.JobGen[i] = uint64(trial*1000 + i + 1)
			}
		}
		o.track.Update(s)
		o.buf.slots(len(s.Jobs))
		o.buf.out, o.queue.fresh = o.buf.out[:0], o.queue.fresh[:0]
		var want []*entry
		for i, j := range s.Jobs {
			e := &o.buf.slab[i]
			if s.JobGen[i] == uint64(trial*1000+i+1) {
				lo := 1 + rng.IntN(3)
				*e = entry{kind: active, job: j, id: j.ID, pos: i, lo: lo, frac: 1, est: estimate{steps: float64(rng.IntN(4)), speed: Speed{C0: 1}}}
				o.queue.fresh = append(o.queue.fresh, int32(i))
			}
			o.buf.out = append(o.buf.out, e)
			want = append(want, e)
		}
		sort.SliceStable(want, func(a, b int) bool {
			ca := want[a].est.remaining(want[a].lo) * float64(want[a].lo) * want[a].frac
			cb := want[b].est.remaining(want[b].lo) * float64(want[b].lo) * want[b].frac
			if ca != cb {
				return ca < cb
			}
			if want[a].job.Submit != want[b].job.Submit {
				return want[a].job.Submit < want[b].job.Submit
			}
			return want[a].id < want[b].id
		})
		got := o.admissionOrder(trial > 0)
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d queued, want %d", trial, len(got), len(want))
		}
		for i := range got {
			if g := &o.buf.slab[got[i].pos]; g != want[i] {
				t.Fatalf("trial %d: position %d is %s, want %s", trial, i, g.id, want[i].id)
			}
		}
	}
}
