package live

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// poolNodesForTest: n1 in dc1/default with attributes, n2 in dc2/default,
// n3 in dc1/gpu-a.
func poolNodesForTest() map[string]*nodeInfo {
	gpu := []nodeGPU{{Index: 0, UUID: "G", MemoryMiB: 1000, FreeFraction: 1, FreeMemMiB: 1000}}
	return map[string]*nodeInfo{
		"n1": {ID: "n1", Name: "one", Pool: "default", Datacenter: "dc1", Attrs: map[string]string{"cpu.arch": "amd64", "kernel.version": "6.1"}, Meta: map[string]string{"rack": "r1", "tags": "a,b,c"}, GPUs: gpu},
		"n2": {ID: "n2", Name: "two", Pool: "default", Datacenter: "dc2", Attrs: map[string]string{"cpu.arch": "arm64"}, Meta: map[string]string{"rack": "r2"}, GPUs: gpu},
		"n3": {ID: "n3", Name: "three", Pool: "gpu-a", Datacenter: "dc1", Attrs: map[string]string{"cpu.arch": "amd64"}, GPUs: gpu},
	}
}

func TestTargetPoolRefusesTheQueueAndMissingPools(t *testing.T) {
	s := testScheduler(t)
	pools := map[string]bool{"default": true, "gpu-a": true, allPool: true}
	if p, err := s.targetPool(nil, pools); err != nil || p != "default" {
		t.Fatalf("default: %q %v", p, err)
	}
	if _, err := s.targetPool(map[string]string{MetaPool: "caravan-queue"}, pools); err == nil || !strings.Contains(err.Error(), "queue pool itself") {
		t.Fatalf("queue pool: %v", err)
	}
	if _, err := s.targetPool(map[string]string{MetaPool: "no-such-pool"}, pools); err == nil || !strings.Contains(err.Error(), `"no-such-pool": Nomad has no such node pool`) {
		t.Fatalf("missing pool: %v", err)
	}
}

func TestEligibleNodesFollowPoolDatacentersAndConstraints(t *testing.T) {
	nodes := poolNodesForTest()
	job := testJob("j", map[string]any{"command": "x", "gpus": 1})
	g, err := parseGang(job)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, pool string, want string) {
		t.Helper()
		if got := strings.Join(eligibleNodes(job, g, pool, nodes), ","); got != want {
			t.Errorf("%s: eligible %q, want %q", what, got, want)
		}
	}
	check("pool default", "default", "n1,n2")
	check("pool gpu-a", "gpu-a", "n3")
	check("pool restricted (no nodes)", "restricted", "")
	check("pool all", allPool, "n1,n2,n3")
	job.Datacenters = []string{"dc2"}
	check("datacenter dc2", "default", "n2")
	job.Datacenters = []string{"dc*"}
	check("datacenter glob", "default", "n1,n2")
	job.Constraints = []*api.Constraint{api.NewConstraint("${attr.cpu.arch}", "=", "amd64")}
	check("job constraint", allPool, "n1,n3")
	job.Constraints = nil
	tg := job.TaskGroups[0]
	for _, c := range []struct {
		cons *api.Constraint
		want string
	}{
		{api.NewConstraint("${meta.rack}", "!=", "r1"), "n2,n3"},
		{api.NewConstraint("${meta.rack}", "regexp", "^r[12]$"), "n1,n2"},
		{api.NewConstraint("${meta.tags}", "set_contains", "a,c"), "n1"},
		{api.NewConstraint("${meta.tags}", "set_contains_any", "x,b"), "n1"},
		{api.NewConstraint("${meta.rack}", "is_set", ""), "n1,n2"},
		{api.NewConstraint("${attr.kernel.version}", ">=", "6.0"), "n1"},
		{api.NewConstraint("${node.unique.name}", "=", "three"), "n3"},
		{api.NewConstraint("${node.datacenter}", "=", "dc1"), "n1,n3"},
		{api.NewConstraint("${attr.cpu.arch}", "semver", ">= 1"), "n1,n2,n3"}, // left to Nomad
		{api.NewConstraint(nodeIDTarget, "=", "n2"), "n1,n2,n3"},              // the scheduler's own pin
	} {
		tg.Constraints = []*api.Constraint{c.cons}
		check(c.cons.LTarget+" "+c.cons.Operand+" "+c.cons.RTarget, allPool, c.want)
	}
}

// A job whose pool has no capable node waits with that reason and reaches
// no policy (bug: it was pinned to a node of another pool and held its GPU).
func TestClassesKeepJobsToTheirPools(t *testing.T) {
	s := testScheduler(t)
	w := &world{nodes: poolNodesForTest(), pools: map[string]bool{"default": true, "gpu-a": true, "restricted": true, allPool: true}}
	mk := func(id string, meta map[string]string) *entry {
		job := testJob(id, map[string]any{"command": "x", "gpus": 1})
		g, _ := parseGang(job)
		return &entry{stub: &jobStub{ID: id, Meta: meta}, phase: phaseQueued, rec: &record{}, job: &cachedJob{job: job, gang: g}}
	}
	def, gpuA := mk("def", nil), mk("gpua", map[string]string{MetaPool: "gpu-a"})
	restricted, self := mk("restricted", map[string]string{MetaPool: "restricted"}), mk("self", map[string]string{MetaPool: "caravan-queue"})
	cs := s.classes(w, []*entry{def, gpuA, restricted, self})
	if len(cs) != 2 || strings.Join(cs[0].nodes, ",") != "n1,n2" || cs[0].entries[0] != def || strings.Join(cs[1].nodes, ",") != "n3" || cs[1].entries[0] != gpuA {
		t.Fatalf("classes %+v", cs)
	}
	if !strings.Contains(reasonFor(restricted, nil), `no ready node with caravan GPUs in pool "restricted"`) {
		t.Errorf("restricted: %q", reasonFor(restricted, nil))
	}
	if !strings.Contains(reasonFor(self, nil), "queue pool itself") {
		t.Errorf("self: %q", reasonFor(self, nil))
	}
	// The policy of the default class never sees gpu-a's node.
	snap := s.snapshot(newGPUBook(w.nodes, nil, nil), cs[0].nodes, cs[0].entries, 1)
	if len(snap.Cluster.Nodes) != 2 || len(snap.Jobs) != 1 || snap.Jobs[0].ID != "def" {
		t.Fatalf("snapshot %+v", snap)
	}
}

func TestOneLineReason(t *testing.T) {
	if got := oneLine("Unexpected response code: 500 (rpc error:\n<html>...\n</html>)"); got != "Unexpected response code: 500 (rpc error:" {
		t.Fatalf("%q", got)
	}
	if got := oneLine(strings.Repeat("é", 300)); len(got) > maxReason || !strings.HasSuffix(got, "...") {
		t.Fatalf("%d bytes", len(got))
	}
}
