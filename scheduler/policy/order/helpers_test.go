package order

import (
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

func decide(t *testing.T, o policy.Orderer, s *policy.Snapshot) policy.Decision {
	t.Helper()
	d := policy.NewFramework(o, place.NewConsolidated()).Decide(s)
	if err := pt.Check(s, d); err != nil {
		t.Fatalf("invariant: %v", err)
	}
	return d
}

func started(d policy.Decision) []string {
	var ids []string
	for _, s := range d.Starts {
		ids = append(ids, s.JobID)
	}
	return ids
}

func ids(rs []policy.Ranked) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Job.ID)
	}
	return out
}

func oneNode(gpus int) policy.Cluster {
	return pt.Cluster(pt.ClusterSpec{Racks: 1, NodesPerRack: 1, GPUsPerNode: gpus})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// spreadPrior is the tests' 2D-Gittins prior: job durations spread from
// minutes to a day, so indexes differ between services.
func spreadPrior() []float64 { return []float64{100, 900, 3000, 20000, 80000} }
