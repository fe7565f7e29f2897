package live

import (
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// mirror is the scheduler's copy of what it needs of Nomad's state: job
// stubs, allocation stubs, usable caravan nodes and node pools. A full
// reconcile (reconcile.go) fills it from list calls; between reconciles the
// event stream (feed.go) updates it. Every object keeps the Nomad index of
// its last change, so a duplicated or reordered event never rolls an
// object back, and a deletion leaves a tombstone so an older event cannot
// bring the object back. Only the round goroutine touches it.
type mirror struct {
	jobs   map[string]*jobStub
	allocs map[string]*api.AllocationListStub
	nodes  map[string]*nodeInfo // usable caravan GPU nodes
	pools  map[string]bool
	// pending is, per job, the evaluations Nomad has not run yet and the
	// job version each evaluates (evals.go).
	pending map[string]map[string]uint64
	// seen is the newest index of every object kind, usable or not, and
	// gone the tombstones: the index at which an object was deleted.
	seen map[objKey]uint64
	gone map[objKey]uint64
	// listed is, per kind, the index a full reconcile read the kind at:
	// events at or below it are already in the lists.
	listed map[api.Topic]uint64
	// index is the newest event index applied; fresh is the newest write
	// of ours known to be reflected (writes made before the reconcile).
	index, fresh uint64
	// order is every job by submit time then ID, and byJob each job's
	// allocations by create index then ID (order.go): kept as events
	// arrive, so a round neither sorts nor groups.
	order []*jobStub
	byJob map[string][]*api.AllocationListStub
	// sets memoises node sets of nodes; dropped when nodes change.
	sets *nodeSets
	// nodeAt is the ModifyIndex of the full node each node's entry in
	// nodes (or its absence) was made from: a reconcile reuses it while
	// the node list shows the same index.
	nodeAt map[string]uint64
	// changed is the jobs whose stub or allocations changed since the
	// round last took them (incremental.go); epoch moves when the order
	// or grouping is rebuilt wholesale, poolsGen when pools are listed.
	changed         map[string]bool
	epoch, poolsGen uint64
}

type objKey struct {
	kind api.Topic
	id   string
}

func newMirror() *mirror {
	return &mirror{jobs: map[string]*jobStub{}, allocs: map[string]*api.AllocationListStub{},
		nodes: map[string]*nodeInfo{}, pools: map[string]bool{allPool: true},
		pending: map[string]map[string]uint64{},
		seen:    map[objKey]uint64{}, gone: map[objKey]uint64{}, listed: map[api.Topic]uint64{},
		nodeAt: map[string]uint64{}}
}

// setNode records a full node as read: usable (info) or not (nil). It
// reports whether anything the scheduler reads of the node changed, and
// drops the eligible-set memo only when a job's eligibility may have:
// Nomad writes a node on every allocation update its client sends (its
// LastAllocUpdateIndex), ~40 node events a second at 1,000 nodes, and
// the driver's free-GPU numbers move with every task; dropping the memo
// on each had every round classify every job again.
func (m *mirror) setNode(n *api.Node, info *nodeInfo) bool {
	m.nodeAt[n.ID] = n.ModifyIndex
	old := m.nodes[n.ID]
	if sameNode(old, info) {
		return false
	}
	if !sameEligibility(old, info) {
		m.sets = nil
	}
	delete(m.nodes, n.ID)
	if info != nil {
		m.nodes[n.ID] = info
	}
	return true
}

// touchJob notes that a job's stub or allocations changed.
func (m *mirror) touchJob(id string) {
	if m.changed == nil {
		m.changed = map[string]bool{}
	}
	m.changed[id] = true
}

// takeChanged returns the jobs changed since the last call and forgets them.
func (m *mirror) takeChanged() map[string]bool {
	c := m.changed
	m.changed = nil
	return c
}

// newer reports whether a change of the object at index is newer than
// what the mirror holds, and records it as seen if so.
func (m *mirror) newer(k objKey, index uint64) bool {
	if index <= m.listed[k.kind] || index <= m.seen[k] || index <= m.gone[k] {
		return false
	}
	m.seen[k] = index
	return true
}

// remove deletes an object at index, leaving a tombstone.
func (m *mirror) remove(k objKey, index uint64) bool {
	if index <= m.listed[k.kind] || index <= m.seen[k] || index <= m.gone[k] {
		return false
	}
	delete(m.seen, k)
	m.gone[k] = index
	return true
}

// caughtUp reports whether the mirror reflects every write of ours up to
// wrote.
func (m *mirror) caughtUp(wrote uint64) bool { return max(m.index, m.fresh) >= wrote }

// world is the round's view of the mirror: managed jobs by submit time,
// their allocations, nodes and pools. The mirror keeps jobs in that order
// and allocations grouped and ordered per job as events change them
// (order.go), so a round walks the jobs once and sorts nothing. A nil
// managed leaves the job list out (the incremental round keeps its own).
func (m *mirror) world(managed func(*jobStub) bool) *world {
	if m.sets == nil {
		m.sets = &nodeSets{}
	}
	if len(m.order) != len(m.jobs) {
		m.resort()
	}
	if m.byJob == nil {
		m.regroup()
	}
	w := &world{nodes: m.nodes, pools: m.pools, allocs: m.byJob, sets: m.sets,
		index: max(m.index, m.listed[api.TopicJob])}
	if managed != nil {
		w.jobs = m.managedJobs(managed)
	}
	return w
}

// managedJobs is the managed jobs in the mirror's order.
func (m *mirror) managedJobs(managed func(*jobStub) bool) []*jobStub {
	out := make([]*jobStub, 0, len(m.order))
	for _, j := range m.order {
		if managed(j) {
			out = append(out, j)
		}
	}
	return out
}

// sameNode reports whether two reads of a node (nil: not usable) hold the
// same of everything the scheduler reads.
func sameNode(a, b *nodeInfo) bool {
	return sameEligibility(a, b) && (a == nil || slices.Equal(a.GPUs, b.GPUs) && maps.Equal(a.Attrs, b.Attrs))
}

// sameEligibility reports whether every job may use both reads of a node
// alike (eligibleNodes): the same of all a constraint may test and the
// same GPUs, their free shares (the driver's ledger) aside.
func sameEligibility(a, b *nodeInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Name != b.Name || a.Pool != b.Pool || a.Datacenter != b.Datacenter || a.Class != b.Class ||
		!maps.Equal(a.Meta, b.Meta) || !slices.EqualFunc(a.GPUs, b.GPUs, sameGPU) {
		return false
	}
	return equalBut(a.Attrs, b.Attrs, isGPUUsageAttr)
}

func sameGPU(a, b nodeGPU) bool {
	return a.Index == b.Index && a.UUID == b.UUID && a.Model == b.Model && a.MemoryMiB == b.MemoryMiB
}

// isGPUUsageAttr is a driver attribute that moves with every task: a
// GPU's free fraction or memory (nodes.go, usageKey).
func isGPUUsageAttr(k string) bool {
	k = strings.TrimPrefix(k, "unique.")
	return strings.HasPrefix(k, gpuAttr) && (strings.HasSuffix(k, ".free_fraction") || strings.HasSuffix(k, ".free_memory_mib"))
}

// equalBut reports whether a and b hold the same keys and values, keys
// for which skip is true aside.
func equalBut(a, b map[string]string, skip func(string) bool) bool {
	n := 0
	for k, v := range a {
		if skip(k) {
			continue
		}
		if w, ok := b[k]; !ok || w != v {
			return false
		}
		n++
	}
	for k := range b {
		if !skip(k) {
			n--
		}
	}
	return n == 0
}
