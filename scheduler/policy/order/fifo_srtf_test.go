package order

import (
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

func fifoSnapshot() *policy.Snapshot {
	cl := oneNode(4)
	r := pt.Job("r", 2, 0)
	pt.Run(&cl, r, pt.Whole("r0n0", 16384, 0, 1))
	return &policy.Snapshot{Now: 10, Cluster: cl, Jobs: []*policy.Job{
		pt.Job("huge", 8, 0.5), pt.Job("a", 3, 1), pt.Job("b", 1, 2), r,
	}}
}

func TestFIFOHeadOfLineBlocking(t *testing.T) {
	s := fifoSnapshot()
	d := decide(t, NewFIFO(FIFOConfig{}), s)
	if len(d.Starts) != 0 {
		t.Fatalf("strict FIFO must not start b past a: %v", started(d))
	}
	if d.Waiting.Reason("a") != "needs 3 GPUs, 2 free" {
		t.Errorf("a: %q", d.Waiting.Reason("a"))
	}
	if !strings.HasPrefix(d.Waiting.Reason("b"), "head-of-line blocked: behind 1") {
		t.Errorf("b: %q", d.Waiting.Reason("b"))
	}
	if d.Waiting.Reason("huge") != "can never fit: needs 8 GPUs, cluster has 4 GPUs" {
		t.Errorf("huge: %q", d.Waiting.Reason("huge"))
	}
}

func TestFIFOBackfill(t *testing.T) {
	d := decide(t, NewFIFO(FIFOConfig{Backfill: true}), fifoSnapshot())
	if !equal(started(d), []string{"b"}) || len(d.Preempts) != 0 {
		t.Fatalf("backfill should start b only, got %v / %v", started(d), d.Preempts)
	}
}

func TestSRTFPicksShortestAndPreempts(t *testing.T) {
	cl := oneNode(2)
	long := pt.Job("long", 1, 0)
	long.OracleDuration, long.Executed = 5000, 1000 // 4000 left
	pt.Run(&cl, long, pt.Whole("r0n0", 16384, 0))
	mk := func(id string, dur float64) *policy.Job {
		j := pt.Job(id, 1, 10)
		j.OracleDuration = dur
		return j
	}
	s := &policy.Snapshot{Now: 1000, Cluster: cl, Jobs: []*policy.Job{
		long, mk("j300", 300), mk("j100", 100), mk("j9000", 9000),
	}}
	o := NewSRTFOracle()
	if got := ids(o.Order(s)); !equal(got, []string{"j100", "j300", "long", "j9000"}) {
		t.Fatalf("order %v", got)
	}
	d := decide(t, o, s)
	if !equal(started(d), []string{"j100", "j300"}) || !equal(d.Preempts, []string{"long"}) {
		t.Fatalf("starts %v preempts %v", started(d), d.Preempts)
	}
	if !strings.Contains(d.Waiting.Reason("j9000"), "needs 1 GPU, 0 free") {
		t.Errorf("j9000: %q", d.Waiting.Reason("j9000"))
	}
}

// A snapshot that promises (Submit, ID) order is ranked as listed, and
// that ranking is exactly the sorted one.
func TestFIFOSubmitOrderedMatchesSort(t *testing.T) {
	s := pt.Random(7, pt.RandomSpec{Cluster: pt.ClusterSpec{Racks: 2, NodesPerRack: 4, GPUsPerNode: 8}, Running: 20, Queued: 300, Busy: 0.8})
	sorted := NewFIFO(FIFOConfig{}).Order(s)
	want := ids(sorted)
	listed := make([]*policy.Job, 0, len(sorted))
	for _, r := range sorted {
		listed = append(listed, r.Job)
	}
	s.Jobs, s.SubmitOrdered = listed, true
	if got := ids(NewFIFO(FIFOConfig{}).Order(s)); !equal(got, want) {
		t.Fatalf("listed order differs from the sorted one")
	}
}
