package live

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// mkEvent builds an event as the stream decodes it: each payload key as
// its JSON.
func mkEvent(t *testing.T, topic api.Topic, typ string, index uint64, payload map[string]any) event {
	t.Helper()
	p := map[string]json.RawMessage{}
	for k, v := range payload {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p[k] = raw
	}
	return event{Topic: topic, Type: typ, Index: index, Payload: p}
}

// setPayloadField rewrites one field of the object at the payload's key.
func setPayloadField(t *testing.T, ev *event, key, field string, value any) {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(ev.Payload[key], &obj); err != nil {
		t.Fatal(err)
	}
	obj[field] = value
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	ev.Payload[key] = raw
}

func jobEvent(t *testing.T, id, pool, status string, index uint64, deleted bool) event {
	typ := "JobRegistered"
	if deleted {
		typ = "JobDeregistered"
	}
	j := &api.Job{ID: &id, Namespace: ptr("default"), Type: ptr("batch"), Status: &status, NodePool: &pool,
		JobModifyIndex: ptr(uint64(10)), ModifyIndex: &index, CreateIndex: ptr(uint64(10)), SubmitTime: ptr(int64(index))}
	return mkEvent(t, api.TopicJob, typ, index, map[string]any{"Job": j, "Deleted": deleted})
}

func allocEvent(t *testing.T, id, job, client string, index uint64) event {
	a := &api.Allocation{ID: id, Namespace: "default", JobID: job, TaskGroup: "w0", NodeID: "n1",
		DesiredStatus: "run", ClientStatus: client, CreateIndex: 12, ModifyIndex: index}
	return mkEvent(t, api.TopicAllocation, "AllocationUpdated", index, map[string]any{"Allocation": a})
}

// history is a short cluster history: two jobs, one purged, one running
// and finishing.
func history(t *testing.T) []event {
	return []event{
		jobEvent(t, "a", "caravan-queue", "pending", 10, false),
		jobEvent(t, "b", "caravan-queue", "pending", 11, false),
		allocEvent(t, "a1", "a", "pending", 12),
		allocEvent(t, "a1", "a", "running", 13),
		jobEvent(t, "a", "caravan-queue", "running", 14, false),
		jobEvent(t, "b", "caravan-queue", "pending", 15, true),
		allocEvent(t, "a1", "a", "complete", 16),
		jobEvent(t, "a", "caravan-queue", "dead", 17, false),
	}
}

// summary is what a round reads of a world, comparable across runs.
func summary(w *world) []string {
	var out []string
	for _, j := range w.jobs {
		out = append(out, fmt.Sprintf("job %s %s %d", j.ID, j.Status, j.ModifyIndex))
	}
	for id, as := range w.allocs {
		for _, a := range as {
			out = append(out, fmt.Sprintf("alloc %s/%s %s %d", id, a.ID, a.ClientStatus, a.ModifyIndex))
		}
	}
	sort.Strings(out)
	return out
}

func TestEventsDuplicatedAndReorderedGiveTheSameWorld(t *testing.T) {
	s := testScheduler(t)
	m := newMirror()
	for _, ev := range history(t) {
		if changed, err := s.applyEvent(m, &ev); err != nil || !changed {
			t.Fatalf("in-order event %s@%d: changed=%v err=%v", ev.Topic, ev.Index, changed, err)
		}
	}
	want := summary(m.world(s.managed))
	if !reflect.DeepEqual(want, []string{"alloc a/a1 complete 16", "job a dead 17"}) {
		t.Fatalf("in order: %v", want)
	}
	for seed := int64(0); seed < 50; seed++ {
		evs := append(history(t), history(t)...) // every event twice
		rand.New(rand.NewSource(seed)).Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
		m := newMirror()
		for _, ev := range evs {
			if _, err := s.applyEvent(m, &ev); err != nil {
				t.Fatal(err)
			}
		}
		if got := summary(m.world(s.managed)); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: %v, want %v", seed, got, want)
		}
		if m.index != 17 {
			t.Fatalf("seed %d: index %d", seed, m.index)
		}
	}
}

func TestEventsAtOrBelowTheListsAreIgnored(t *testing.T) {
	s := testScheduler(t)
	m := newMirror()
	m.listed[api.TopicJob] = 20
	m.jobs["a"] = &jobStub{ID: "a", Type: "batch", NodePool: "caravan-queue", Status: "running", ModifyIndex: 19}
	for _, ev := range []event{
		jobEvent(t, "a", "caravan-queue", "pending", 18, false),
		jobEvent(t, "a", "caravan-queue", "pending", 20, true), // a purge the list already shows not
	} {
		if changed, _ := s.applyEvent(m, &ev); changed {
			t.Fatalf("event at %d changed a mirror listed at 20", ev.Index)
		}
	}
	if m.jobs["a"] == nil || m.jobs["a"].Status != "running" {
		t.Fatalf("job a rolled back: %+v", m.jobs["a"])
	}
	ev := jobEvent(t, "a", "caravan-queue", "dead", 21, false)
	if changed, _ := s.applyEvent(m, &ev); !changed || m.jobs["a"].Status != "dead" {
		t.Fatalf("event after the list not applied: %+v", m.jobs["a"])
	}
}

func TestEventsOfOtherNamespacesAndUnreadablePayloads(t *testing.T) {
	s := testScheduler(t)
	m := newMirror()
	ev := jobEvent(t, "x", "caravan-queue", "pending", 5, false)
	setPayloadField(t, &ev, "Job", "Namespace", "other")
	if changed, err := s.applyEvent(m, &ev); changed || err != nil || len(m.jobs) != 0 {
		t.Fatalf("other namespace: changed=%v err=%v", changed, err)
	}
	bad := mkEvent(t, api.TopicAllocation, "AllocationUpdated", 6, map[string]any{"Allocation": "not an object"})
	if _, err := s.applyEvent(m, &bad); err == nil {
		t.Fatal("an unreadable allocation event was accepted")
	}
}

func nodeEvent(t *testing.T, typ string, index uint64, eligible bool) event {
	elig := "eligible"
	if !eligible {
		elig = "ineligible"
	}
	n := &api.Node{ID: "n1", Name: "node1", NodePool: "default", Status: "ready", SchedulingEligibility: elig,
		ModifyIndex: index, Drivers: map[string]*api.DriverInfo{"caravan": {Attributes: map[string]string{
			gpuAttr + "count": "1", gpuAttr + "0.uuid": "GPU-0", gpuAttr + "0.memory_mib": "1024"}}}}
	return mkEvent(t, api.TopicNode, typ, index, map[string]any{"Node": n})
}

func TestNodeEventsFollowUsability(t *testing.T) {
	s := testScheduler(t)
	m := newMirror()
	steps := []struct {
		ev   event
		want bool
	}{
		{nodeEvent(t, "NodeRegistration", 3, true), true},
		{nodeEvent(t, "NodeEligibility", 4, false), false},
		{nodeEvent(t, "NodeRegistration", 3, true), false}, // a late duplicate
		{nodeEvent(t, "NodeEligibility", 5, true), true},
		{nodeEvent(t, "NodeDeregistration", 6, true), false},
		{nodeEvent(t, "NodeRegistration", 5, true), false}, // older than the deregistration
	}
	for i, st := range steps {
		if _, err := s.applyEvent(m, &st.ev); err != nil {
			t.Fatal(err)
		}
		n := m.nodes["n1"]
		if (n != nil) != st.want {
			t.Fatalf("step %d (%s@%d): node usable = %v, want %v", i, st.ev.Type, st.ev.Index, n != nil, st.want)
		}
		if n != nil && (len(n.GPUs) != 1 || n.GPUs[0].UUID != "GPU-0") {
			t.Fatalf("step %d: GPUs %+v", i, n.GPUs)
		}
	}
}

// fullJobEvent is a job event carrying a whole caravan job, as Nomad sends.
func fullJobEvent(t *testing.T, id, pool string, jobIndex, index uint64) event {
	j := testJob(id, map[string]any{"command": "x", "gpus": 1}, map[string]any{"command": "x", "gpus": 1})
	j.Namespace, j.Type, j.NodePool, j.Status = ptr("default"), ptr("batch"), &pool, ptr("pending")
	j.JobModifyIndex, j.ModifyIndex, j.CreateIndex = &jobIndex, &index, ptr(uint64(5))
	if pool != "caravan-queue" && id == "a" {
		j.Meta = map[string]string{MetaAdmitted: "2026-01-01T00:00:00Z"}
	}
	return mkEvent(t, api.TopicJob, "JobRegistered", index, map[string]any{"Job": j})
}

func TestJobEventsCarryTheFullJobSoClassifyReadsNone(t *testing.T) {
	s := testScheduler(t) // no Nomad client: a read would panic
	m := newMirror()
	apply := func(ev event) {
		t.Helper()
		if _, err := s.applyEvent(m, &ev); err != nil {
			t.Fatal(err)
		}
	}
	apply(fullJobEvent(t, "a", "caravan-queue", 10, 10))
	c := s.fullJob(m.jobs["a"])
	if c.err != nil || c.index != 10 || len(c.gang.Workers) != 2 || deref(c.job.ID) != "a" {
		t.Fatalf("cached from the event: index %d, %d workers, err %v", c.index, len(c.gang.Workers), c.err)
	}
	apply(fullJobEvent(t, "a", "default", 12, 12))       // the admission's rewrite
	apply(fullJobEvent(t, "a", "caravan-queue", 10, 11)) // a late duplicate of the old version
	if c := s.fullJob(m.jobs["a"]); c.index != 12 || deref(c.job.NodePool) != "default" {
		t.Fatalf("after the rewrite: index %d pool %s", c.index, deref(c.job.NodePool))
	}
	if s.calls.Load() != 0 {
		t.Fatalf("%d API calls", s.calls.Load())
	}
	apply(fullJobEvent(t, "other", "default", 3, 13)) // not caravan's: not cached
	if s.jobs["other"] != nil {
		t.Fatal("an unmanaged job was cached")
	}
	ev := jobEvent(t, "a", "default", "dead", 14, true)
	apply(ev)
	if s.jobs["a"] != nil || m.jobs["a"] != nil {
		t.Fatal("a purged job stays cached")
	}
}

// Nomad writes a node on every allocation update from its client (an
// AllocationUpdated event on the Node topic with the node unchanged but
// for LastAllocUpdateIndex): that is no change to the mirror and keeps
// the eligible-set memo. A free-GPU change (the driver's ledger) updates
// the node and keeps the memo; a meta change drops it.
func TestNodeEventsKeepTheSetMemoUnlessEligibilityMoved(t *testing.T) {
	s := testScheduler(t)
	m := newMirror()
	apply := func(ev event) bool {
		t.Helper()
		changed, err := s.applyEvent(m, &ev)
		if err != nil {
			t.Fatal(err)
		}
		return changed
	}
	if !apply(nodeEvent(t, "NodeRegistration", 3, true)) {
		t.Fatal("a new usable node was no change")
	}
	w := m.world(s.managed)
	memo := w.sets
	w.poolSet("default")
	if apply(nodeEvent(t, "AllocationUpdated", 4, true)) || m.sets != memo {
		t.Fatalf("an allocation update on the node changed the mirror or dropped the memo")
	}
	ev := nodeEvent(t, "NodeRegistration", 5, true)
	setPayloadField(t, &ev, "Node", "Drivers", map[string]any{"caravan": map[string]any{"Attributes": map[string]string{
		gpuAttr + "count": "1", gpuAttr + "0.uuid": "GPU-0", gpuAttr + "0.memory_mib": "1024",
		"unique." + gpuAttr + "0.free_fraction": "0.5"}}})
	if !apply(ev) || m.sets != memo || m.nodes["n1"].GPUs[0].FreeFraction != 0.5 {
		t.Fatalf("a free-GPU change: node %+v, memo kept %v", m.nodes["n1"].GPUs, m.sets == memo)
	}
	ev = nodeEvent(t, "NodeRegistration", 6, true)
	setPayloadField(t, &ev, "Node", "Meta", map[string]string{"rack": "r9"})
	if !apply(ev) || m.sets == memo {
		t.Fatalf("a meta change kept the memo")
	}
}

func TestEqualButSkipsOnlyWhatItIsTold(t *testing.T) {
	skip := func(k string) bool { return k == "x" }
	for _, c := range []struct {
		a, b map[string]string
		want bool
	}{
		{map[string]string{"a": "1", "x": "1"}, map[string]string{"a": "1", "x": "2"}, true},
		{map[string]string{"a": "1"}, map[string]string{"a": "1", "x": "2"}, true},
		{map[string]string{"a": "1"}, map[string]string{"a": "2"}, false},
		{map[string]string{"a": "1"}, map[string]string{"a": "1", "b": "2"}, false},
		{map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "1"}, false},
	} {
		if got := equalBut(c.a, c.b, skip); got != c.want {
			t.Errorf("equalBut(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if !isGPUUsageAttr("unique.driver.caravan.gpu.3.free_memory_mib") || !isGPUUsageAttr(gpuAttr+"0.free_fraction") ||
		isGPUUsageAttr(gpuAttr+"0.memory_mib") {
		t.Fatal("isGPUUsageAttr")
	}
}
