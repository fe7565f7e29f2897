package live

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/hashicorp/nomad/api"
)

func testNodes() map[string]*nodeInfo {
	return map[string]*nodeInfo{
		"n1": {ID: "n1", Name: "one", GPUs: []nodeGPU{{Index: 0, UUID: "GPU-a", MemoryMiB: 1000, FreeFraction: 1, FreeMemMiB: 1000}, {Index: 1, UUID: "GPU-b", MemoryMiB: 1000, FreeFraction: 1, FreeMemMiB: 1000}}},
		"n2": {ID: "n2", Name: "two", GPUs: []nodeGPU{{Index: 0, UUID: "GPU-c", MemoryMiB: 1000, FreeFraction: 1, FreeMemMiB: 1000}}},
	}
}

func TestAdmitPinsEveryWorkerAndRequeueUndoesIt(t *testing.T) {
	job := testJob("j", map[string]any{"command": "x", "gpu_fraction": 0.5}, map[string]any{"command": "x", "gpu_fraction": 0.5}, nil)
	job.NodePool = ptr("caravan-queue")
	g, err := parseGang(job)
	if err != nil {
		t.Fatal(err)
	}
	p := policy.Placement{Slots: []policy.Slot{{Node: "n1", GPU: 1, Fraction: 0.5, MemMiB: 300}, {Node: "n2", GPU: 0, Fraction: 0.5}}}
	ts, err := resolve(g, p, testNodes())
	if err != nil {
		t.Fatal(err)
	}
	admitJob(job, "gpu", ts, rendezvous{}, time.Unix(100, 0))
	if *job.NodePool != "gpu" || job.Meta[MetaAdmitted] == "" {
		t.Fatalf("pool %s meta %v", *job.NodePool, job.Meta)
	}
	w0 := job.TaskGroups[0]
	if c := w0.Constraints; len(c) != 1 || c[0].LTarget != nodeIDTarget || c[0].RTarget != "n1" {
		t.Fatalf("group w0 constraints %+v", c)
	}
	cfg := w0.Tasks[0].Config
	if !reflect.DeepEqual(cfg["gpu_uuids"], []string{"GPU-b"}) || cfg["gpu_memory"] != "300MiB" {
		t.Fatalf("task config %v", cfg)
	}
	if got := job.TaskGroups[1].Tasks[0].Config["gpu_uuids"]; !reflect.DeepEqual(got, []string{"GPU-c"}) {
		t.Fatalf("worker 1 pinned to %v", got)
	}
	if len(job.TaskGroups[2].Constraints) != 0 {
		t.Fatal("a group without a GPU task was pinned")
	}
	back, err := decodePlacement(job.Meta[MetaPlacement])
	if err != nil || !reflect.DeepEqual(toPolicy(back).Slots, []policy.Slot{{Node: "n1", GPU: 1, Fraction: 0.5, MemMiB: 300}, {Node: "n2", GPU: 0, Fraction: 0.5}}) {
		t.Fatalf("placement round trip: %v %v", back, err)
	}

	requeueJob(job, "caravan-queue", "preempted: test")
	requeueJob(job, "caravan-queue", "preempted: again")
	if *job.NodePool != "caravan-queue" || len(w0.Constraints) != 0 || w0.Tasks[0].Config["gpu_uuids"] != nil {
		t.Fatalf("requeue left pins: pool %s constraints %v config %v", *job.NodePool, w0.Constraints, w0.Tasks[0].Config)
	}
	if job.Meta[MetaPreemptions] != "2" || job.Meta[MetaAdmitted] != "" || job.Meta[MetaReason] != "preempted: again" {
		t.Fatalf("meta after requeue %v", job.Meta)
	}
}

func TestResolveRejectsBadPlacements(t *testing.T) {
	g := gang{Workers: []worker{{Group: "a", Task: "t"}}, Fraction: 1}
	for _, p := range []policy.Placement{
		{},
		{Slots: []policy.Slot{{Node: "nope", GPU: 0}}},
		{Slots: []policy.Slot{{Node: "n2", GPU: 3}}},
	} {
		if _, err := resolve(g, p, testNodes()); err == nil {
			t.Errorf("resolve accepted %+v", p)
		}
	}
	if _, err := decodePlacement("a=n1/x/GPU/1/0"); err == nil {
		t.Error("decodePlacement accepted a bad GPU index")
	}
}

func TestGPUBookHoldsDrainingJobsAndForeignUse(t *testing.T) {
	nodes := testNodes()
	nodes["n2"].GPUs[0].FreeFraction = 0.25 // a task caravan does not manage
	draining := &entry{held: []target{{NodeID: "n1", GPU: 0, Fraction: 1}}}
	l := newGPUBook(nodes, []*entry{draining}, nil)
	if l.fits([]target{{NodeID: "n1", GPU: 0, Fraction: 0.5}}) {
		t.Error("a GPU still held by a draining job was offered")
	}
	if l.fits([]target{{NodeID: "n2", GPU: 0, Fraction: 0.5}}) {
		t.Error("the driver's foreign use was ignored")
	}
	two := []target{{NodeID: "n1", GPU: 1, Fraction: 0.5}, {NodeID: "n1", GPU: 1, Fraction: 0.5}}
	if !l.fits(two) {
		t.Error("two halves did not fit a free GPU")
	}
	l.commit(two)
	if l.fits([]target{{NodeID: "n1", GPU: 1, Fraction: 0.1}}) {
		t.Error("a full GPU took more")
	}
	// Right after caravan used n2's GPU, its fingerprint may be stale.
	fresh := newGPUBook(nodes, nil, func(node string, gpu int) bool { return node != "n2" })
	if !fresh.fits([]target{{NodeID: "n2", GPU: 0, Fraction: 1}}) {
		t.Error("a stale fingerprint held a GPU caravan just released")
	}
	snap := (&Scheduler{}).snapshot(l, l.nodeIDs(), nil, 5)
	if len(snap.Cluster.Nodes) != 2 || snap.Cluster.Nodes[0].GPUs[0].UsedFraction != 1 || snap.Cluster.Nodes[1].GPUs[0].UsedFraction != 0.75 {
		t.Fatalf("snapshot cluster %+v", snap.Cluster)
	}
}

// A whole-GPU worker written gpus = "1" (a string, as HCL may send it)
// stays whole: pinning must not add gpu_fraction, which the driver refuses
// beside gpus.
func TestAdmitKeepsStringWholeGPUWhole(t *testing.T) {
	job := testJob("j", map[string]any{"command": "x", "gpus": "1"})
	g, err := parseGang(job)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := resolve(g, policy.Placement{Slots: []policy.Slot{{Node: "n1", GPU: 0, Fraction: 1}}}, testNodes())
	if err != nil {
		t.Fatal(err)
	}
	admitJob(job, "gpu", ts, rendezvous{}, time.Unix(100, 0))
	cfg := job.TaskGroups[0].Tasks[0].Config
	if _, ok := cfg["gpu_fraction"]; ok {
		t.Fatalf("whole GPU task got gpu_fraction: %v", cfg)
	}
	if _, err := taskRequest(job.TaskGroups[0].Tasks[0]); err != nil {
		t.Fatalf("pinned config is invalid for the driver: %v", err)
	}
}

func sortedIDs(nodes map[string]*nodeInfo) []string {
	return (&gpuBook{nodes: nodes}).nodeIDs()
}

// count = N in a group is an N-worker gang: admission splits it into N
// pinned groups of count 1, and every worker learns its rank, the world
// size and rank 0's address, as torchrun would give them.
func TestCountGroupIsAGangWithRanks(t *testing.T) {
	job := testJob("ddp", map[string]any{"command": "x", "gpus": 1.0}, nil)
	job.TaskGroups[0].Count = ptr(3)
	job.TaskGroups[0].Tasks[0].Env = map[string]string{"USER_VAR": "kept"}
	g, err := parseGang(job)
	if err != nil || len(g.Workers) != 3 || g.Workers[2].Group != "w0-2" || g.Workers[2].From != "w0" {
		t.Fatalf("gang %+v, %v", g, err)
	}
	nodes := testNodes()
	nodes["n2"].Attrs = map[string]string{"unique.network.ip-address": "10.0.0.2"}
	p := policy.Placement{Slots: []policy.Slot{{Node: "n2", GPU: 0, Fraction: 1}, {Node: "n1", GPU: 0, Fraction: 1}, {Node: "n1", GPU: 1, Fraction: 1}}}
	ts, err := resolve(g, p, nodes)
	if err != nil {
		t.Fatal(err)
	}
	rv := rendezvousFor("ddp", 0, ts, nodes, DefaultConfig().RendezvousAddr)
	if lit := rendezvousFor("ddp", 0, ts, nodes, "127.0.0.1"); lit.Addr != "127.0.0.1" || lit.Port != rv.Port {
		t.Fatalf("literal rendezvous %+v", lit)
	}
	if rv.Addr != "10.0.0.2" || rv.Port < rendezvousBase || rv.Port >= rendezvousBase+rendezvousRange {
		t.Fatalf("rendezvous %+v", rv)
	}
	admitJob(job, "default", ts, rv, time.Unix(1, 0))
	if len(job.TaskGroups) != 4 || *job.TaskGroups[0].Name != "w0-0" || *job.TaskGroups[2].Name != "w0-2" || *job.TaskGroups[3].Name != "w1" {
		t.Fatalf("groups after split: %v", groupNames(job))
	}
	for i, tg := range job.TaskGroups[:3] {
		env := tg.Tasks[0].Env
		if *tg.Count != 1 || env["RANK"] != strconv.Itoa(i) || env["WORLD_SIZE"] != "3" || env["LOCAL_RANK"] != "0" ||
			env["MASTER_ADDR"] != "10.0.0.2" || env["MASTER_PORT"] != strconv.Itoa(rv.Port) || env["CARAVAN_RANK"] != env["RANK"] || env["USER_VAR"] != "kept" {
			t.Fatalf("worker %d: count %d env %v", i, *tg.Count, env)
		}
		if tg.Constraints[0].RTarget != ts[i].NodeID {
			t.Fatalf("worker %d pinned to %s, want %s", i, tg.Constraints[0].RTarget, ts[i].NodeID)
		}
	}
	// The split job reads back as the same gang, and requeueing forgets
	// the rendezvous (the next admission may move rank 0).
	again, err := parseGang(job)
	if err != nil || len(again.Workers) != 3 || again.Workers[1].Group != "w0-1" {
		t.Fatalf("re-read gang %+v, %v", again, err)
	}
	requeueJob(job, "caravan-queue", "preempted: test")
	if env := job.TaskGroups[1].Tasks[0].Env; env["RANK"] != "" || env["MASTER_ADDR"] != "" || env["USER_VAR"] != "kept" {
		t.Fatalf("env after requeue %v", env)
	}
}

func groupNames(job *api.Job) []string {
	var out []string
	for _, tg := range job.TaskGroups {
		out = append(out, *tg.Name)
	}
	return out
}
