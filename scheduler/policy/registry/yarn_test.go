package registry

import (
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// fifo is Tiresias' YARN-CS baseline: a 4-GPU head that no node holds
// blocks the queue even though 4 GPUs are free in total and a 1-GPU job
// behind it would fit; fifo+consolidated spreads the head instead.
func TestFIFOIsYarnWithHeadOfLineBlocking(t *testing.T) {
	cl := pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 2, GPUsPerNode: 4})
	pt.Run(&cl, pt.Job("r0", 2, 0), pt.Whole("r0n0", 16384, 0, 1))
	pt.Run(&cl, pt.Job("r1", 2, 0), pt.Whole("r0n1", 16384, 0, 1))
	running := []*policy.Job{}
	snap := func() *policy.Snapshot {
		js := append(running, pt.Job("head", 4, 10), pt.Job("small", 1, 20))
		return &policy.Snapshot{Now: 30, Cluster: cl, Jobs: js}
	}
	p := mustNew(t, "fifo")
	if p.Name() != "fifo+yarn" {
		t.Fatalf("fifo is %s, want fifo+yarn", p.Name())
	}
	d := p.Decide(snap())
	if len(d.Starts) != 0 {
		t.Fatalf("fifo started %v: the head must block the queue", d.Starts)
	}
	if why := d.Waiting.Reason("head"); !strings.Contains(why, "on one node") {
		t.Errorf("head waits with %q", why)
	}
	if why := d.Waiting.Reason("small"); !strings.HasPrefix(why, "head-of-line blocked") {
		t.Errorf("small waits with %q", why)
	}
	d = mustNew(t, "fifo+consolidated").Decide(snap())
	if len(d.Starts) != 1 || d.Starts[0].JobID != "head" || len(d.Starts[0].Placement.Slots) != 4 {
		t.Fatalf("fifo+consolidated should spread the head over both nodes, got %+v", d.Starts)
	}
}
