package policy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
)

// eps absorbs float noise when fractions are summed and subtracted.
const eps = 1e-9

// smallGang is the most GPUs (or nodes) a gang's slots are deduplicated
// over by linear search; larger gangs use a map.
const smallGang = 32

// FreeGPU is what is still free on one GPU during a decision.
type FreeGPU struct {
	Index    int
	Model    string
	Free     float64 // free compute fraction, 0..1
	FreeMem  int64
	TotalMem int64
	// Util is the summed utilisation of the tasks already on the GPU.
	Util float64
	// gang is the last GangWriter that wrote slots on it (gangGen)
	gang uint64
}

// Whole reports whether nothing at all is allocated on the GPU.
func (g *FreeGPU) Whole() bool { return g.Free >= 1-eps && g.FreeMem >= g.TotalMem }

// FreeNode is one node's free capacity, with a summary kept current so that
// placers can skip a node without scanning its GPUs.
type FreeNode struct {
	Name     string
	Rack     string
	RackID   int
	LinkGbps float64
	GPUs     []FreeGPU
	// WholeFree counts GPUs with nothing allocated, Partial those partly
	// allocated with compute left; FreeSum sums Free and MaxFree is the
	// largest Free (a fraction above it fits nowhere on the node).
	WholeFree, Partial int
	FreeSum, MaxFree   float64
	// maxMem is the largest TotalMem of the node's GPUs.
	maxMem int64
	// exactFree: every GPU's Free is dyadic (preempt_exact.go), as of
	// the last summarise
	exactFree bool
}

// Capacity is the mutable free-capacity view a decision works on. It is
// built from a Snapshot's cluster and updated as gangs are committed or
// preempted, so placers always see what is left.
type Capacity struct {
	Nodes []FreeNode
	Racks []string
	// Links is the cluster's measured pair bandwidths (nil = none).
	Links  *Links
	byName map[string]int
	// Epoch increases whenever capacity is released, so "this shape did not
	// fit" stays valid exactly until something is freed.
	Epoch     int
	totalGPUs int
	wholeFree int
	freeSum   float64
	// residents are the jobs on each GPU, only for placers that ask
	// (ResidentTracker); nil otherwise.
	residents map[gpuPos][]*Job
	// track is the Cluster.Gen change tracking of the last Reset.
	track genTrack
	// limits are the cluster's ClusterLimits, summed with the totals so a
	// decision need not walk every GPU again; limitsOK is false when the
	// cluster lists a node name twice (Capacity keeps only the first, the
	// limits count both).
	limits   ClusterLimits
	limitsOK bool
	// the last node nodeOf found (forgotten by Reset)
	lastName string
	lastNode int
	lastOK   bool
	// changes and memo serve placers' memos (capacity_changes.go)
	changes changeLog
	memo    any
	// sums, wholes and maxes are each node's FreeSum, WholeFree and
	// MaxFree, kept by summary updates (setSums), for placers' scans
	// (NodeSums, NodeMaxFree)
	sums   []float64
	wholes []int32
	maxes  []float64
	// scratch of Commit and apply, reused (one allocation each per slot
	// were a tenth of a preemption-heavy decision)
	refs    []slotRef
	wants   []want
	touched []int
	olds    []nodeTotals // nodesChanged's scratch
	// runNodes and runStarts are runsOf's storage, parts applyRuns'
	runNodes  []int
	runStarts []int32
	parts     []applyPart
	marks     nodeMarks
	used      nodeMarks // settle's GPUs of a new gang (markUsed)
	placed    []slotRef // commitPlaced's resolved slots of the new gang
	// placedGang is the writer whose stamps mark its GPUs (0: none;
	// capacity_gang.go)
	placedGang uint64
	// gang is the placement the last GangWriter returned (its refs in
	// gangRefs' storage); gangGen counts the writers (capacity_gang.go)
	gang     gangNote
	gangRefs []slotRef
	gangGen  uint64
	// gangOver: a slot the writer wrote may not fit as commitPlaced
	// checks (capacity_gang.go); freeGen counts the changes to the
	// GPUs' free shares and memory since the last Reset
	gangOver atomic.Bool
	freeGen  uint64
	// hash and trials serve the preemption trial memo (capacity_hash.go,
	// preempt_memo.go)
	hash   stateHash
	trials *trialStore
	// layout changes whenever a Reset finds a GPU listed under another
	// Index: resolved slots (victimRefs) are then stale
	layout uint64
	// rereads are Reset's parts (rereadAll), empty between Resets with
	// their lists' storage kept; rereadN counts the nodes the last one
	// re-read
	rereads []rereadPart
	rereadN int
	// racks lists each rack's nodes (capacity_racks.go)
	racks rackIndex
	// reserve is the pre-faulted storage of the next giant gang's slots
	// (capacity_reserve.go)
	reserve slotReserve
}

// NewCapacity indexes the free capacity of a cluster. Over-committed GPUs
// (used > 1 or memory above the total) simply count as full.
func NewCapacity(c *Cluster) *Capacity {
	cp := &Capacity{byName: make(map[string]int, len(c.Nodes)), Nodes: make([]FreeNode, 0, len(c.Nodes)), Links: c.Links,
		refs: make([]slotRef, 0, 8), wants: make([]want, 0, 8), touched: make([]int, 0, 8), rereads: make([]rereadPart, 0, 1)}
	rackIDs := map[string]int{}
	slab := make([]FreeGPU, 0, gpuCount(c)) // one allocation for every node's GPUs
	for _, n := range c.Nodes {
		if _, dup := cp.byName[n.Name]; dup {
			continue // first entry wins; a duplicate name cannot be addressed
		}
		rid, ok := rackIDs[n.Rack]
		if !ok {
			rid = len(cp.Racks)
			rackIDs[n.Rack] = rid
			cp.Racks = append(cp.Racks, n.Rack)
		}
		fn := FreeNode{Name: n.Name, Rack: n.Rack, RackID: rid, LinkGbps: n.LinkGbps}
		start := len(slab)
		for _, g := range n.GPUs {
			slab = append(slab, freeOf(g))
		}
		if len(n.GPUs) > 0 {
			fn.GPUs = slab[start:len(slab):len(slab)] // capped: no node can grow into the next
		}
		cp.byName[n.Name] = len(cp.Nodes)
		cp.Nodes = append(cp.Nodes, fn)
		cp.totalGPUs += len(n.GPUs)
	}
	for i := range cp.Nodes {
		cp.resummarise(i)
	}
	cp.rereadN = len(cp.Nodes) // it read every node
	cp.indexRacks()
	cp.sumLimits(len(cp.Nodes) == len(c.Nodes))
	cp.track.remember(c, len(cp.Nodes))
	return cp
}

// sumLimits records the limits of the nodes as summarised (complete:
// the Capacity holds every node of its cluster).
func (cp *Capacity) sumLimits(complete bool) {
	cp.limits, cp.limitsOK = ClusterLimits{gpus: cp.totalGPUs}, complete
	for i := range cp.Nodes {
		cp.limits.maxMem = max(cp.limits.maxMem, cp.Nodes[i].maxMem)
	}
}

// Limits are LimitsOf the cluster cp was last reset from.
func (cp *Capacity) Limits(c *Cluster) ClusterLimits {
	if cp.limitsOK {
		return cp.limits
	}
	return LimitsOf(c)
}

// Reset makes cp the free capacity of c, reusing cp's storage when c has
// the same nodes (names, racks, GPU counts) as last time, which is the
// steady state of a scheduler deciding over and over on one cluster: it
// then skips rebuilding the name index and reallocating every GPU, and
// when c tracks its changes (Cluster.Gen) it re-reads only the nodes that
// changed since the last Reset or that the last round committed to or
// released on. A nil cp, or a changed cluster, gets a fresh Capacity.
func (cp *Capacity) Reset(c *Cluster) *Capacity {
	if cp == nil || !cp.sameNodes(c) {
		return NewCapacity(c)
	}
	cp.Epoch = 0
	cp.residents = nil
	cp.gang = gangNote{} // a round commits only what it placed
	cp.lastName, cp.lastNode, cp.lastOK = "", 0, false
	cp.Links = c.Links
	// the nodes not re-read, or re-read unchanged, are as the last round
	// left them, so a placer's memos (and the trial memo's digest) stay
	// valid across rounds by re-reading the changed ones: a churned round
	// re-read all 10,000 per shape, and an untracked one restarted the
	// log, voiding every memo
	cp.rereadAll(c, cp.track.follows(c))
	// the totals in node order, as resummarise from zero sums them
	cp.wholeFree, cp.freeSum = 0, 0
	cp.limits.maxMem = 0
	cp.growSums()
	for i := range cp.Nodes {
		cp.wholeFree += cp.Nodes[i].WholeFree
		cp.freeSum += cp.Nodes[i].FreeSum
		cp.limits.maxMem = max(cp.limits.maxMem, cp.Nodes[i].maxMem)
		cp.setSums(i)
	}
	cp.track.remember(c, len(cp.Nodes))
	cp.freeGen = 0 // no gang is noted across a Reset
	return cp
}

// rereadAll re-reads c's nodes into cp (tracked: only the stale ones),
// logging each changed node in node order. A churned round re-reads
// thousands of nodes (every node its trials released victims on), a few
// cache misses each, so at scale the nodes are cut into parts re-read
// side by side: a part writes only its own nodes and its own list of
// changed ones, layout count and digest (XOR: any order gives the same),
// which are then applied in part order, as the serial pass would.
func (cp *Capacity) rereadAll(c *Cluster, tracked bool) {
	// split when the last Reset re-read many nodes (a churned round
	// re-reads thousands, a quiet one a few: skipping the others is
	// ~5 ns a node) or every node is read; a recording saves GPUs in
	// order (never at a Reset)
	k := 1
	if !cp.hash.rec && (!tracked || cp.rereadN >= rereadMin) {
		k = splitPartsOf(len(c.Nodes), rereadMin)
	}
	cp.rereadN = 0
	cp.rereads = grow(cp.rereads, k)
	if k > 1 {
		split(len(c.Nodes), k, func(part, lo, hi int) { cp.rereadNodes(c, tracked, part, lo, hi) })
	} else {
		cp.rereadNodes(c, tracked, 0, 0, len(c.Nodes))
	}
	for _, rp := range cp.rereads {
		cp.rereadN += rp.read
		cp.layout += rp.layout
		cp.hash.a ^= rp.a
		cp.hash.b ^= rp.b
		for _, i := range rp.changed {
			cp.logChange(int(i))
		}
	}
	cp.rereads = cp.rereads[:0] // the parts' lists stay in its storage
}

// rereadNodes is rereadAll's part over the nodes [lo, hi).
func (cp *Capacity) rereadNodes(c *Cluster, tracked bool, part, lo, hi int) {
	rp := rereadPart{changed: cp.rereads[part].changed[:0]}
	for i := lo; i < hi; i++ {
		if tracked && !cp.track.stale(c, i) {
			continue
		}
		rp.read++
		if cp.reread(i, &c.Nodes[i], &rp) {
			rp.changed = append(rp.changed, int32(i))
		}
	}
	cp.rereads[part] = rp
}

// rereadMin is the fewest nodes a part of rereadAll gets (a node is
// ~200 ns of misses: eight GPUs on each side).
var rereadMin = 1024

// rereadPart is what one part of rereadAll changed beyond its nodes.
type rereadPart struct {
	changed []int32
	read    int // nodes re-read
	layout  uint64
	a, b    uint64 // the digest's change (capacity_hash.go)
}

// reread makes node i's GPUs those of n, reporting whether anything
// changed (then resummarised): every field bit for bit. Layout changes
// and the digest's change are added to rp.
func (cp *Capacity) reread(i int, n *Node, rp *rereadPart) bool {
	fn := &cp.Nodes[i]
	changed := math.Float64bits(fn.LinkGbps) != math.Float64bits(n.LinkGbps)
	fn.LinkGbps = n.LinkGbps
	for k := range n.GPUs {
		g, old := &n.GPUs[k], &fn.GPUs[k]
		free, mem := freeParts(g)
		if old.isFreeOf(g, free, mem) {
			continue
		}
		changed = true
		if old.Index != g.Index {
			rp.layout++
		}
		if cp.hash.on {
			id := int(cp.hash.base[i]) + k
			if cp.hash.rec { // serial then (rereadAll): as a trial's change
				cp.hashOut(old, i, id, k)
				old.setFreeOf(g, free, mem)
				cp.hashIn(old, id)
				continue
			}
			a, b := gpuHashes(id, old)
			old.setFreeOf(g, free, mem)
			a2, b2 := gpuHashes(id, old)
			rp.a ^= a ^ a2
			rp.b ^= b ^ b2
			continue
		}
		old.setFreeOf(g, free, mem)
	}
	if changed {
		summarise(fn)
	}
	return changed
}

// isFreeOf reports whether f is freeOf(g), bit for bit (its gang
// aside), given freeParts(g).
func (f *FreeGPU) isFreeOf(g *GPU, free float64, mem int64) bool {
	return f.Index == g.Index && f.Model == g.Model && f.FreeMem == mem && f.TotalMem == g.MemoryMiB &&
		math.Float64bits(f.Free) == math.Float64bits(free) && math.Float64bits(f.Util) == math.Float64bits(g.Util)
}

// setFreeOf makes f freeOf(g), given freeParts(g), in place: a FreeGPU
// assigned whole is built on the stack and copied over, and the copy's
// 16-byte loads of the 8-byte stores just made stall (a giant gang's
// round re-reads 80,000 GPUs).
func (f *FreeGPU) setFreeOf(g *GPU, free float64, mem int64) {
	f.Index, f.Model, f.TotalMem, f.Util = g.Index, g.Model, g.MemoryMiB, g.Util
	f.Free, f.FreeMem, f.gang = free, mem, 0
}

// sameNodes reports whether c lists exactly cp's nodes, in order.
func (cp *Capacity) sameNodes(c *Cluster) bool {
	if len(cp.Nodes) != len(c.Nodes) {
		return false
	}
	for i := range c.Nodes {
		n, fn := &c.Nodes[i], &cp.Nodes[i]
		if n.Name != fn.Name || n.Rack != fn.Rack || len(n.GPUs) != len(fn.GPUs) {
			return false
		}
	}
	return true
}

func gpuCount(c *Cluster) int {
	n := 0
	for _, nd := range c.Nodes {
		n += len(nd.GPUs)
	}
	return n
}

func freeOf(g GPU) FreeGPU {
	free, mem := freeParts(&g)
	return FreeGPU{Index: g.Index, Model: g.Model, Free: free, FreeMem: mem, TotalMem: g.MemoryMiB, Util: g.Util}
}

// freeParts is g's free share and memory as a FreeGPU holds them.
func freeParts(g *GPU) (free float64, mem int64) {
	free = 1 - g.UsedFraction
	if free < eps || math.IsNaN(free) {
		free = 0
	}
	if free > 1 {
		free = 1
	}
	mem = g.MemoryMiB - g.UsedMemoryMiB
	if mem < 0 {
		mem = 0
	}
	return free, mem
}

// resummarise recomputes node i's summary and the cluster totals.
func (c *Capacity) resummarise(i int) {
	n := &c.Nodes[i]
	c.wholeFree -= n.WholeFree
	c.freeSum -= n.FreeSum
	summarise(n)
	c.wholeFree += n.WholeFree
	c.freeSum += n.FreeSum
	c.growSums()
	c.setSums(i)
}

// growSums sizes the per-node summary arrays (sums, wholes, maxes).
func (c *Capacity) growSums() {
	if len(c.sums) != len(c.Nodes) || len(c.maxes) != len(c.Nodes) {
		c.sums, c.wholes = growSums(c.sums, len(c.Nodes)), growSums(c.wholes, len(c.Nodes))
		c.maxes = growSums(c.maxes, len(c.Nodes))
	}
}

// setSums copies node i's summary into the per-node arrays (sized).
func (c *Capacity) setSums(i int) {
	n := &c.Nodes[i]
	c.sums[i], c.wholes[i], c.maxes[i] = n.FreeSum, int32(n.WholeFree), n.MaxFree
}

// NodeSums are each node's FreeSum and WholeFree as compact arrays (a
// scan over 10,000 nodes reads 12 B per node instead of a FreeNode's
// 112), when they can be trusted: only a Capacity that logs its changes
// (a Framework's) promises that every change went through Commit,
// Release or Reset, which keep them; ok is false otherwise.
func (c *Capacity) NodeSums() (freeSum []float64, wholeFree []int32, ok bool) {
	if !c.changes.on || len(c.sums) != len(c.Nodes) {
		return nil, nil, false
	}
	return c.sums, c.wholes, true
}

// NodeMaxFree is each node's MaxFree, kept beside NodeSums (nil where
// NodeSums is not ok): a placer's memo catching up on thousands of
// changed nodes tests, as nodeFit first does, whether any GPU has the
// share, from arrays that stay in cache from one memo to the next, where
// reading each node's summary was a cache miss per node and memo.
func (c *Capacity) NodeMaxFree() []float64 {
	if _, _, ok := c.NodeSums(); !ok || len(c.maxes) != len(c.Nodes) {
		return nil
	}
	return c.maxes
}

func growSums[T any](xs []T, n int) []T {
	if cap(xs) < n {
		return make([]T, n)
	}
	return xs[:n]
}

// summarise recomputes a node's summary from its GPUs.
func summarise(n *FreeNode) {
	n.WholeFree, n.Partial, n.FreeSum, n.MaxFree, n.maxMem = 0, 0, 0, 0, 0
	n.exactFree = true
	for k := range n.GPUs {
		n.exactFree = n.exactFree && dyadic(n.GPUs[k].Free)
		n.MaxFree = max(n.MaxFree, n.GPUs[k].Free)
		n.maxMem = max(n.maxMem, n.GPUs[k].TotalMem)
		if n.GPUs[k].Whole() {
			n.WholeFree++
		} else if n.GPUs[k].Free > 0 {
			n.Partial++
		}
		n.FreeSum += n.GPUs[k].Free
	}
}

// TotalGPUs is the number of GPUs in the cluster.
func (c *Capacity) TotalGPUs() int { return c.totalGPUs }

// WholeFree is the number of GPUs with nothing allocated.
func (c *Capacity) WholeFree() int { return c.wholeFree }

// FreeSum is the summed free compute fraction over all GPUs.
func (c *Capacity) FreeSum() float64 { return c.freeSum }

// NodeIndex finds a node by name.
func (c *Capacity) NodeIndex(name string) (int, bool) {
	i, ok := c.byName[name]
	return i, ok
}

// gpuOn is node n's first GPU of the given Index, nil if none.
func gpuOn(n *FreeNode, index int) *FreeGPU {
	for k := range n.GPUs {
		if n.GPUs[k].Index == index {
			return &n.GPUs[k]
		}
	}
	return nil
}

// nodeOf is NodeIndex, remembering the last name: a gang's slots and a
// preemption's victims come node by node, and hashing every slot's node
// name was a sixth of a preemption-heavy decision.
func (c *Capacity) nodeOf(name string) (int, bool) {
	if c.lastOK && name == c.lastName {
		return c.lastNode, true
	}
	i, ok := c.byName[name]
	if ok {
		c.lastName, c.lastNode, c.lastOK = name, i, true
	}
	return i, ok
}

// slotRef is a slot's GPU and node, resolved once per Commit or Release.
type slotRef struct {
	g  *FreeGPU
	ni int
}

// want is what a gang asks of one GPU (Commit's over-commit check).
type want struct {
	g    *FreeGPU
	node string
	frac float64
	mem  int64
	next int32 // the node's previous want (big gangs), -1 at the end
}

// wantOn is the index in wants of g's want on node ni, -1 if none (a big
// gang: the node's wants are chained from c.marks).
func (c *Capacity) wantOn(wants []want, ni int, g *FreeGPU) int {
	k, ok := c.marks.get(ni)
	if !ok {
		return -1
	}
	for k >= 0 && wants[k].g != g {
		k = wants[k].next
	}
	return int(k)
}

// Commit takes a gang's slots out of the free capacity, all or nothing.
// util is the utilisation each slot adds to its GPU.
func (c *Capacity) Commit(p Placement, util float64) error {
	refs, err := c.resolve(p, c.refs[:0])
	defer func() { c.refs = refs[:0] }()
	return c.commitRefs(p, refs, err, util, false)
}

// resolve finds each slot's GPU (nil where unknown; err is the first
// unknown slot's), appending to refs. A gang of tens of thousands of
// slots resolves in parts side by side (each reads only, and writes its
// own slots' refs): an 80,001-slot gang started in a preemption trial
// took ~1.2 ms resolving, serially.
func (c *Capacity) resolve(p Placement, refs []slotRef) ([]slotRef, error) {
	at, n := len(refs), len(p.Slots)
	refs = slices.Grow(refs, n)[:at+n]
	k := splitParts(n)
	if k < 2 {
		return refs, c.resolveRange(p.Slots, refs[at:])
	}
	errs := make([]error, k)
	split(n, k, func(part, lo, hi int) { errs[part] = c.resolveRange(p.Slots[lo:hi], refs[at+lo:at+hi]) })
	return refs, cmp.Or(errs...) // the first part's is the first slot's
}

// resolveRange writes each slot's ref to out (the zero ref where it
// does not resolve) and returns the first failure's error. It only
// reads c. A gang's slots come node by node, mostly in node order: the
// last slot's node, then the next node, are tried before the name map.
func (c *Capacity) resolveRange(slots []Slot, out []slotRef) error {
	var first error
	last := -1
	for i := range slots {
		s := &slots[i]
		ni := last
		switch {
		case ni >= 0 && s.Node == c.Nodes[ni].Name:
		case ni >= 0 && ni+1 < len(c.Nodes) && s.Node == c.Nodes[ni+1].Name:
			ni++
		default:
			var ok bool
			if ni, ok = c.byName[s.Node]; !ok {
				ni = -1
			}
		}
		var g *FreeGPU
		if ni >= 0 {
			g = gpuOn(&c.Nodes[ni], s.GPU)
		}
		if g == nil {
			out[i], last = slotRef{}, -1
			if first == nil {
				first = slotError(s, ni >= 0)
			}
			continue
		}
		out[i], last = slotRef{g, ni}, ni
	}
	return first
}

// slotError says why slot s does not resolve (known: its node exists).
func slotError(s *Slot, known bool) error {
	if !known {
		return fmt.Errorf("unknown node %q", s.Node)
	}
	return fmt.Errorf("node %q has no GPU %d", s.Node, s.GPU)
}

// commitRefs is Commit of p resolved to refs (rerr: resolve's error).
func (c *Capacity) commitRefs(p Placement, refs []slotRef, rerr error, util float64, checked bool) error {
	if rerr != nil {
		return rerr
	}
	runs := c.runsOf(refs) // once, for the check and the apply
	// a gang its writer found fitting is not checked again (capacity_gang.go)
	if !checked {
		if err := c.overCommittedIn(p, refs, runs); err != nil {
			return err
		}
	}
	c.applyIn(p, refs, -1, util, runs)
	return nil
}

// overCommitted checks that every GPU holds what the gang asks of it.
func (c *Capacity) overCommitted(p Placement, refs []slotRef) error {
	return c.overCommittedIn(p, refs, c.runsOf(refs))
}

// overCommittedIn is overCommitted, in parts of the gang's node runs
// where it has them (runsOf).
func (c *Capacity) overCommittedIn(p Placement, refs []slotRef, runs gangRuns) error {
	if runs.parts > 1 {
		return c.overCommittedRuns(p, refs, runs)
	}
	// a gang has few slots: a slice beats a map, up to a point (a gang
	// of thousands searched it quadratically, seconds per commit); past
	// smallGang slots each node lists its wants (a map per big gang was
	// a tenth of a churned 10k round's preemption trials)
	wants := c.wants[:0]
	defer func() { c.wants = wants[:0] }()
	big := len(p.Slots) > smallGang
	if big {
		c.marks.start(len(c.Nodes))
	}
	for i, s := range p.Slots {
		g, ni := refs[i].g, refs[i].ni
		k := 0
		if big {
			k = c.wantOn(wants, ni, g)
		} else {
			for k < len(wants) && wants[k].g != g {
				k++
			}
		}
		if k == len(wants) || k < 0 {
			k = len(wants)
			wants = append(wants, want{g: g, node: s.Node, next: -1})
			if big {
				if head, ok := c.marks.get(ni); ok {
					wants[k].next = head
				}
				c.marks.set(ni, int32(k))
			}
		}
		wants[k].frac += s.Fraction
		wants[k].mem += s.MemMiB
	}
	return firstOver(wants)
}

// firstOver is the error of the first want its GPU cannot hold, if any.
func firstOver(wants []want) error {
	for _, w := range wants {
		if w.frac > w.g.Free+eps || w.mem > w.g.FreeMem {
			return fmt.Errorf("%s GPU %d over-committed: wants %.3g (%d MiB), %.3g (%d MiB) free",
				w.node, w.g.Index, w.frac, w.mem, w.g.Free, w.g.FreeMem)
		}
	}
	return nil
}

// overCommittedRuns is overCommitted of a resolved gang whose nodes each
// come in one run (runsOf), in parts of whole runs side by side: a
// GPU's wants all lie in its node's run, so each run is checked alone,
// from a few wants, in the serial order of first appearance; the first
// part's error is the first GPU's. An 80,001-slot gang took ~0.6 ms
// through the nodes' chained wants.
func (c *Capacity) overCommittedRuns(p Placement, refs []slotRef, runs gangRuns) error {
	errs := make([]error, runs.parts)
	split(len(runs.starts), runs.parts, func(part, lo, hi int) {
		if from, to := runs.span(part, lo, hi, len(refs)); lo < hi {
			errs[part] = overRuns(p.Slots, refs, from, to)
		}
	})
	return cmp.Or(errs...) // the first part's is the first GPU's
}

// overRuns checks the slots [lo, hi), whole runs of nodes, run by run.
func overRuns(slots []Slot, refs []slotRef, lo, hi int) error {
	var buf [16]want
	for i := lo; i < hi; {
		ni, wants := refs[i].ni, buf[:0]
		for ; i < hi && refs[i].ni == ni; i++ {
			g, k := refs[i].g, 0
			for k < len(wants) && wants[k].g != g {
				k++
			}
			if k == len(wants) {
				wants = append(wants, want{g: g, node: slots[i].Node})
			}
			wants[k].frac += slots[i].Fraction
			wants[k].mem += slots[i].MemMiB
		}
		if err := firstOver(wants); err != nil {
			return err
		}
	}
	return nil
}

// span is the slots [from, to) of the runs [lo, hi) of a gang of slots
// slots (part: their part; the first also takes the unresolved slots
// before the first run, the last those after it).
func (g gangRuns) span(part, lo, hi, slots int) (from, to int) {
	from, to = slots, slots
	if lo < len(g.starts) {
		from = int(g.starts[lo])
	}
	if part == 0 {
		from = 0
	}
	if hi < len(g.starts) {
		to = int(g.starts[hi])
	}
	return from, to
}

// Release returns a gang's slots to the free capacity (used for preemption).
func (c *Capacity) Release(p Placement, util float64) {
	refs, _ := c.resolve(p, c.refs[:0]) // a slot on a vanished node: nothing to return
	defer func() { c.refs = refs[:0] }()
	c.releaseRefs(p, refs, util)
}

// releaseRefs is Release of p resolved to refs.
func (c *Capacity) releaseRefs(p Placement, refs []slotRef, util float64) {
	c.apply(p, refs, +1, util)
	c.Epoch++
}

// apply adds sign × each slot to its GPU (refs[i] is slot i's GPU, nil
// to skip it), then resummarises the nodes touched. A gang of tens of
// thousands of slots whose nodes each come in one run of slots (as a
// placer fills them) is applied in parts side by side, each part a
// range of whole runs: an 80,001-slot victim's release took ~1.2-2 ms
// serially. What is shared (the digest, the recording's saved GPUs) is
// kept per part and joined in part order, so the Capacity is the serial
// pass's bit for bit.
func (c *Capacity) apply(p Placement, refs []slotRef, sign float64, util float64) {
	c.applyIn(p, refs, sign, util, c.runsOf(refs))
}

// applyIn is apply, in parts of the gang's node runs where it has them
// (runsOf).
func (c *Capacity) applyIn(p Placement, refs []slotRef, sign, util float64, runs gangRuns) {
	c.freeGen++
	if runs.parts > 1 {
		c.applyRuns(p, refs, sign, util, runs)
		return
	}
	ap := applyPart{saved: c.hash.saved} // saved in place
	c.applyRange(p.Slots, refs, 0, len(refs), sign, util, &ap)
	c.hash.a, c.hash.b, c.hash.saved = c.hash.a^ap.a, c.hash.b^ap.b, ap.saved
	touched := c.touchedBy(refs)
	c.nodesChanged(touched)
	c.touched = touched[:0]
}

// applyPart is what one part of apply adds to the digest and saves of
// the GPUs it changes first in a recording.
type applyPart struct {
	a, b  uint64
	saved []savedGPU
}

// applyRange applies the slots [lo, hi) to their GPUs, adding the
// digest's changes and the recording's saves to ap. A GPU's consecutive
// slots (a packed gang's workers: four of a quarter GPU) are one run: its
// digest is taken out before the first and put back after the last (the
// XOR of each slot's out and in telescopes to that), and the slots are
// applied one by one, so each GPU ends bit for bit as slot by slot.
func (c *Capacity) applyRange(slots []Slot, refs []slotRef, lo, hi int, sign, util float64, ap *applyPart) {
	h := &c.hash
	for i := lo; i < hi; {
		g, ni := refs[i].g, refs[i].ni
		end := i + 1
		for end < hi && refs[end].g == g {
			end++
		}
		if g == nil {
			i = end
			continue
		}
		id := -1
		if h.on {
			var pos int
			id, pos = c.gpuID(g, ni)
			a, b := gpuHashes(id, g)
			ap.a, ap.b = ap.a^a, ap.b^b
			if h.rec && h.stamp[id] != h.cur {
				h.stamp[id] = h.cur
				ap.saved = saveGPU(ap.saved, g, ni, pos)
			}
		}
		for ; i < end; i++ {
			applySlot(g, &slots[i], sign, util)
		}
		if id >= 0 {
			a, b := gpuHashes(id, g)
			ap.a, ap.b = ap.a^a, ap.b^b
		}
	}
}

// applySlot adds sign × slot s to its GPU g.
func applySlot(g *FreeGPU, s *Slot, sign, util float64) {
	g.Free = clamp01(g.Free + sign*s.Fraction)
	g.FreeMem += int64(sign) * s.MemMiB
	if g.FreeMem < 0 {
		g.FreeMem = 0
	}
	if g.FreeMem > g.TotalMem {
		g.FreeMem = g.TotalMem
	}
	g.Util = floor0(g.Util - sign*util)
}

// floor0 is math.Max(0, v) bit for bit (NaN stays NaN, −0 becomes +0)
// without its special cases' branches: a fifth of a giant's apply.
func floor0(v float64) float64 {
	if v > 0 || v != v {
		return v
	}
	return 0
}

// touchedBy lists the nodes of the resolved refs in the order they first
// appear (into c.touched's storage).
func (c *Capacity) touchedBy(refs []slotRef) []int {
	touched := c.touched[:0]
	seen := false // past smallGang nodes: c.marks, as in Commit
	for _, rf := range refs {
		if rf.g == nil {
			continue
		}
		ni := rf.ni
		switch {
		case seen:
			if _, ok := c.marks.get(ni); !ok {
				c.marks.set(ni, 0)
				touched = append(touched, ni)
			}
		case !containsInt(touched, ni):
			touched = append(touched, ni)
			if len(touched) > smallGang {
				seen = true
				c.marks.start(len(c.Nodes))
				for _, t := range touched {
					c.marks.set(t, 0)
				}
			}
		}
	}
	return touched
}

// gangRuns is a gang's nodes in the order of their runs of slots and
// where each run starts, and how many parts its passes are cut into (1:
// serial, nodes and starts then unset).
type gangRuns struct {
	nodes  []int
	starts []int32
	parts  int
}

// runsOf is the runs of a gang of resolved refs that splits into parts
// (splitParts) and whose nodes each come in one run of slots (unresolved
// slots within a run are skipped), in c.runNodes' and c.runStarts'
// storage until the next call; a serial gangRuns otherwise.
func (c *Capacity) runsOf(refs []slotRef) gangRuns {
	k := splitParts(len(refs))
	if k < 2 {
		return gangRuns{parts: 1}
	}
	nodes, starts := c.runNodes[:0], c.runStarts[:0]
	defer func() { c.runNodes, c.runStarts = nodes, starts }()
	c.marks.start(len(c.Nodes))
	last := -1
	for i, rf := range refs {
		if rf.g == nil || rf.ni == last {
			continue
		}
		if _, again := c.marks.get(rf.ni); again {
			return gangRuns{parts: 1} // a node comes back after another
		}
		c.marks.set(rf.ni, 0)
		last = rf.ni
		nodes = append(nodes, rf.ni)
		starts = append(starts, int32(i))
	}
	return gangRuns{nodes: nodes, starts: starts, parts: k}
}

// applyRuns is apply in parts of whole runs.
func (c *Capacity) applyRuns(p Placement, refs []slotRef, sign, util float64, runs gangRuns) {
	parts := grow(c.parts, runs.parts)
	c.parts = parts
	for x := range parts {
		parts[x].a, parts[x].b = 0, 0
	}
	split(len(runs.starts), runs.parts, func(part, lo, hi int) {
		if from, to := runs.span(part, lo, hi, len(refs)); lo < hi {
			c.applyRange(p.Slots, refs, from, to, sign, util, &parts[part])
		}
	})
	h := &c.hash // the parts' changes and saves, in part order
	for k := range parts {
		h.a, h.b = h.a^parts[k].a, h.b^parts[k].b
		h.saved = append(h.saved, parts[k].saved...)
		parts[k].saved = parts[k].saved[:0]
	}
	c.nodesChanged(runs.nodes)
}

// nodesChanged is nodeChanged of each node in touched, in that order. An
// 80,001-slot gang touches every node of 10,000: their summaries are
// recomputed in parts side by side (each writes its own nodes and its
// own entries of c.olds), then the totals, tracking and log follow
// serially, node by node, as nodeChanged would (the float totals sum
// in the same order).
func (c *Capacity) nodesChanged(touched []int) {
	k := splitPartsOf(len(touched), rereadMin)
	if k < 2 {
		for _, ni := range touched {
			c.nodeChanged(ni)
		}
		return
	}
	olds := grow(c.olds, len(touched))
	c.olds = olds
	split(len(touched), k, func(_, lo, hi int) {
		for x := lo; x < hi; x++ {
			n := &c.Nodes[touched[x]]
			olds[x] = nodeTotals{n.WholeFree, n.FreeSum}
			summarise(n)
		}
	})
	c.growSums()
	for x, i := range touched {
		n := &c.Nodes[i]
		c.wholeFree -= olds[x].whole
		c.freeSum -= olds[x].sum
		c.wholeFree += n.WholeFree
		c.freeSum += n.FreeSum
		c.setSums(i)
		c.track.touch(i)
		c.logChange(i)
	}
}

// nodeTotals is what a node adds to the Capacity's totals.
type nodeTotals struct {
	whole int
	sum   float64
}

// nodeChanged summarises, tracks and logs node i after a change to its
// GPUs.
func (c *Capacity) nodeChanged(i int) {
	c.resummarise(i)
	c.track.touch(i)
	c.logChange(i)
}

// setFree writes GPU g of node ni's free share and memory, as apply
// does; the caller then reports the node changed (nodeChanged).
func (c *Capacity) setFree(g *FreeGPU, ni int, free float64, freeMem int64) {
	id := c.unhash(g, ni)
	c.freeGen++
	g.Free, g.FreeMem = free, freeMem
	c.rehash(g, id)
}

func clamp01(v float64) float64 {
	switch {
	case v < eps:
		return 0
	case v > 1-eps:
		return 1
	}
	return v
}

func containsInt(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}
