package policy

// WholeSighted is implemented by placers that, for a whole-GPU demand,
// read nothing of a node without a whole GPU (FreeGPU.Whole): Place
// returns the same on two Capacities whose nodes holding a whole GPU
// are the same, GPU for GPU and bit for bit, and whose total WholeFree
// is the same, whatever the other nodes hold (FreeSum, partial GPUs).
// Trials release lazily only for a placer that charges no utilisation
// (not a UtilPredictor): GPU Util then never moves.
type WholeSighted interface {
	SeesWholeNodesOnly() bool
}

// FitSighted is WholeSighted for fractional demands: for a demand d of a
// fraction of a GPU per worker, the placer reads nothing of a node that
// hosts no worker of d (no GPU with d.FitsOn ≥ 1): Place returns the
// same on two Capacities whose nodes hosting a worker of d are the same,
// GPU for GPU and bit for bit, whatever the other nodes hold and whatever
// the cluster's FreeSum and WholeFree. Its trials release lazily too.
type FitSighted interface {
	SeesFittingNodesOnly() bool
}

// lazyTrial lets a preemption trial release only the victims its
// placer can see: a whole-GPU gang's, and a fractional gang's for a
// FitSighted placer. tryVictims releases victims lowest rank first
// until the gang places, then re-commits every one it did not use:
// 2D-Gittins' trials released ~350 victims each to preempt one (their
// shares do not free whole GPUs until hundreds are out), ~30,000
// releases and re-commits a churned decision at 10,000 nodes, each
// writing its GPUs and re-summarising their nodes; srtf-oracle's
// fractional trials released and re-committed ~1,200 victims each.
//
// Released virtually, a victim is only added to per-GPU sums; it is
// released in the Capacity (materialised) before a placer test once it
// holds a slot on a node that then has a whole GPU, or, for a fractional
// gang, a GPU that hosts one of its workers (relevant); a batch whose
// shortOf test must fail (short) is not flushed. A WholeSighted placer
// and shortOf's count of whole GPUs then see exactly what they would
// with every victim released: a relevant node's victims are all out,
// and every other node has no whole GPU either way (releases only add).
// So does a FitSighted placer, for every node that hosts a worker is
// relevant; shortOf's FreeSum is then short of the pending victims'
// shares, so the trial asks short instead, which adds them. A victim
// never materialised is never re-committed either, which leaves its
// GPUs as releasing and re-committing it would: every share, Free and
// FreeMem is dyadic and no clamp applies (roundTrips' terms, checked
// per victim), so those sums are exact and the node summaries and the
// cluster totals the same, in any order. Util does not move (no
// utilisation is charged). A victim that fails the terms ends the lazy
// mode: every pending victim is materialised and the trial goes on as
// before, from the same capacity.
type lazyTrial struct {
	marks nodeMarks  // node -> its record in nodes
	nodes []lazyNode // nodes the trial's victims touch
	loads []lazyLoad // what the victims release on each GPU
	slots []int32    // each victim's slots' node records
	held  []lazySlot // and what they hold (as slots)
	pend  []lazyVictim
	// out is, per victim of the trial (tryVictims' list), whether it is
	// released in the Capacity; spans its slots (slots[lo:hi])
	out   []bool
	spans []lazyVictim
	// dirty lists the loads whose GPU sync writes; pass counts sync's
	// and truncate's passes over nodes (each node is visited once a pass)
	dirty []int32
	pass  uint32
	// adds counts the victims released virtually, materialised those of
	// them later released in the Capacity (tests check that lazy trials
	// kept some out)
	adds, materialised int64
	// truncated counts materialised victims a narrowed trial put back
	// (preempt_fewest.go); tooLarge the victims that ended a lazy trial
	// by their size (lazyMaxSlots)
	truncated, tooLarge int64
	// whole0 is the Capacity's WholeFree when the trial began, turned the
	// GPUs its victims turned whole so far: the next flush leaves
	// WholeFree at their sum (see short)
	whole0, turned int
	// d is the trial's demand; free0 the Capacity's FreeSum when the
	// trial began, and added the shares its victims released since
	// (virtually or not): FreeSum with every one out (see short)
	d            Demand
	free0, added float64
	// count: the trial counts d's fit (preempt_fit.go): gain is what its
	// victims so far add to the workers the GPUs host, need what the
	// gang lacked when the trial began
	count      bool
	need, gain int
}

// lazyNode is a node the trial's victims touch.
type lazyNode struct {
	ni       int   // its index in the Capacity
	head     int32 // its first GPU in loads, -1: none
	relevant bool  // the placer sees it (hosts) with the victims so far released
	host0    bool  // it did before any (hosts at first sight: truncate's floor)
	// synced and rechecked: the passes (lz.pass) that last wrote it
	// (sync) and recomputed its relevance (truncate)
	synced, rechecked uint32
}

// lazyLoad is what the trial's victims release on one GPU, and the
// GPU's state before the trial.
type lazyLoad struct {
	g       *FreeGPU
	node    int32 // its node's record
	free    float64
	freeMem int64
	frac    float64
	mem     int64
	next    int32 // the node's next GPU, -1 at the end
	// delta is what the GPU gains in the Capacity at the next sync
	delta    float64
	deltaMem int64
	dirty    bool
	whole    bool // the victims so far turn the GPU whole
}

// lazySlot is a victim's slot: its GPU's load and what it holds there.
type lazySlot struct {
	load int32
	frac float64
	mem  int64
}

// lazyVictim is a victim released virtually: its index in the trial's
// list and its slots' node records (slots[lo:hi]).
type lazyVictim struct {
	at     int
	lo, hi int32
}

// lazyMaxSlots is the most slots a victim may hold for a trial to stay
// lazy: a larger one spans so many nodes that its release would be
// materialised nearly whole, and adding its slots one by one to the
// lazy sums first only doubled the work. The benchmark's giant gangs
// (80,001 slots of half a GPU, one preempted and another started a
// decision at 10k × 100k) took ~2 ms more a decision lazily than
// eagerly. A variable for tests.
var lazyMaxSlots = 4096

// lazyAdd adds victim vr (the at-th of the trial) to the lazy trial, and
// reports false where the trial must go on eagerly: the victim is too
// large to be worth it, or fails the terms.
func (r *round) lazyAdd(at int, vr *victimRef) bool {
	if len(vr.refs) > lazyMaxSlots {
		r.lz.tooLarge++
		return false
	}
	return r.lz.add(r.cap, at, vr)
}

// lazyFor is the lazy state for a trial of d, or nil where the trial
// must release every victim: a placer that does not declare that it
// sees only the nodes d can use (WholeSighted, FitSighted), or that
// charges utilisation, tracked residents, or a cluster total that is
// not exact.
// A trial the memo records (preempt_memo.go) may be lazy: the memo keeps
// the GPUs whose state the trial changed, and a victim released and
// re-committed exactly changes none.
func (r *round) lazyFor(d Demand) *lazyTrial {
	_, util := r.f.Place.(UtilPredictor)
	if !r.sighted(d) || util || r.cap.residents != nil || !dyadic(r.cap.freeSum) || r.f.EagerTrials {
		return nil
	}
	lz := &r.f.lazy
	lz.marks.start(len(r.cap.Nodes))
	lz.nodes, lz.loads, lz.slots, lz.held = lz.nodes[:0], lz.loads[:0], lz.slots[:0], lz.held[:0]
	lz.pend, lz.out, lz.spans, lz.dirty = lz.pend[:0], lz.out[:0], lz.spans[:0], lz.dirty[:0]
	lz.whole0, lz.turned = r.cap.WholeFree(), 0
	lz.d, lz.free0, lz.added = d, r.cap.freeSum, 0
	lz.count = false
	return lz
}

// sighted reports that the placer sees only the nodes d can use: a
// WholeSighted one for a whole-GPU gang, a FitSighted one for a
// fractional gang.
func (r *round) sighted(d Demand) bool {
	if d.WholeGPU() {
		ws, ok := r.f.Place.(WholeSighted)
		return ok && ws.SeesWholeNodesOnly()
	}
	fs, ok := r.f.Place.(FitSighted)
	return ok && fs.SeesFittingNodesOnly()
}

// short is shortOf's verdict for the trial's gang on the Capacity with
// every victim so far released, without flushing.
//
// For a whole-GPU gang it counts the whole GPUs: a GPU turns whole only
// once every tenant is out, and then its node is relevant and the flush
// releases all of them, so WholeFree is then whole0 plus the GPUs turned
// whole. A test that shortOf fails needs no flush: the victims stay
// pending for the test that passes. The flush's writes are the same
// either way (each GPU once); what a skipped flush saves is its pass
// over every pending victim, which each doubling batch made again
// (2D-Gittins' trials keep hundreds pending: 0.27 → 0.11 s of flushes
// in a 30-decision profile at 10,000 nodes).
//
// For a fractional gang it adds the shares: every share and the total
// are dyadic (the lazy terms), so free0 plus the shares released is, bit
// for bit, the FreeSum releasing them one by one leaves, in any order.
// The flush leaves pending the victims no relevant node holds, so the
// Capacity's own FreeSum is short of theirs: the trial asks this
// instead of shortOf, before and after the flush.
func (lz *lazyTrial) short() bool {
	d := lz.d
	if d.WholeGPU() {
		return d.Workers > lz.wholeFlushed()
	}
	return d.GPUs() > lz.free0+lz.added+eps
}

// wholeFlushed is the Capacity's WholeFree once the victims so far are
// flushed.
func (lz *lazyTrial) wholeFlushed() int { return lz.whole0 + lz.turned }

// add releases the victim at index at of the trial's list virtually;
// false when it fails the exactness terms (lz's sums are then spoiled:
// the caller materialises what is pending and drops lz).
func (lz *lazyTrial) add(c *Capacity, at int, vr *victimRef) bool {
	if !vr.resolved() {
		return false
	}
	lo := int32(len(lz.slots))
	added := 0.0
	for s := range vr.refs {
		ni, h, ok := lz.slot(c, vr, s)
		if !ok {
			return false
		}
		lz.slots, lz.held = append(lz.slots, ni), append(lz.held, h)
		added += h.frac
	}
	lz.added += added
	v := lazyVictim{at: at, lo: lo, hi: int32(len(lz.slots))}
	lz.pend, lz.spans = append(lz.pend, v), append(lz.spans, v)
	lz.out = append(lz.out, false)
	c.Epoch++ // as its release would: the trials' Epochs stay the same
	lz.adds++
	return true
}

// slot adds slot s of vr's share to its GPU's sums and returns its
// node's record and what it holds; false where the terms fail (an
// unresolved slot, a share or a Free that is not dyadic, a clamp).
func (lz *lazyTrial) slot(c *Capacity, vr *victimRef, s int) (int32, lazySlot, bool) {
	f, ok := vr.dyadicShare(s)
	if !ok {
		return 0, lazySlot{}, false
	}
	rf := vr.refs[s]
	ni, ok := lz.node(c, rf.ni)
	if !ok {
		return 0, lazySlot{}, false
	}
	h := lazySlot{frac: f, mem: vr.shares[s].mem}
	h.load, ok = lz.load(ni, rf.g, f, h.mem)
	return ni, h, ok
}

// node is node i's record, made on first sight (false: a GPU of it has
// a Free that is not dyadic).
func (lz *lazyTrial) node(c *Capacity, i int) (int32, bool) {
	if at, seen := lz.marks.get(i); seen {
		return at, true
	}
	n := &c.Nodes[i]
	if !n.exactFree {
		return 0, false
	}
	at := int32(len(lz.nodes))
	host := lz.hosts(n)
	lz.nodes = append(lz.nodes, lazyNode{ni: i, head: -1, relevant: host, host0: host})
	lz.marks.set(i, at)
	return at, true
}

// load adds a share and memory released on g (of node record ni),
// marking the node relevant when g turns whole, and returns g's load;
// false where a release would clamp.
func (lz *lazyTrial) load(ni int32, g *FreeGPU, f float64, mem int64) (int32, bool) {
	nd := &lz.nodes[ni]
	e := nd.head
	for e >= 0 && lz.loads[e].g != g {
		e = lz.loads[e].next
	}
	if e < 0 {
		e = int32(len(lz.loads))
		lz.loads = append(lz.loads, lazyLoad{g: g, node: ni, free: g.Free, freeMem: g.FreeMem, next: nd.head})
		nd.head = e
	}
	l := &lz.loads[e]
	before := lz.fitOf(l)
	l.frac += f
	l.mem += mem
	if !(l.free+l.frac <= 1) || l.mem > g.TotalMem-l.freeMem {
		return e, false
	}
	lz.gain += lz.fitOf(l) - before
	v := lz.freed(l)
	if v.Whole() && !l.whole {
		l.whole, lz.turned = true, lz.turned+1
	}
	nd.relevant = nd.relevant || lz.shows(&v)
	return e, true
}

// shows reports that the placer sees a node with GPU v: v is whole, or
// hosts a worker of a fractional gang.
func (lz *lazyTrial) shows(v *FreeGPU) bool {
	return v.Whole() || !lz.d.WholeGPU() && lz.d.FitsOn(v) > 0
}

// hosts reports that node n is relevant before any victim of the trial
// is released: it has a whole GPU, or, for a fractional gang, a GPU that
// hosts one of its workers.
func (lz *lazyTrial) hosts(n *FreeNode) bool {
	if n.WholeFree > 0 {
		return true
	}
	if lz.d.WholeGPU() {
		return false
	}
	for k := range n.GPUs {
		if lz.d.FitsOn(&n.GPUs[k]) > 0 {
			return true
		}
	}
	return false
}

// flush materialises the pending victims holding a slot on a relevant
// node (all: every one), in the order they were released.
func (lz *lazyTrial) flush(c *Capacity, all bool) {
	keep := lz.pend[:0]
	for _, p := range lz.pend {
		if !all && !lz.seen(p) {
			keep = append(keep, p)
			continue
		}
		lz.out[p.at] = true
		lz.materialised++
		lz.move(p, +1) // its Epoch was counted by add
	}
	lz.pend = keep
	lz.sync(c)
}

// seen reports that a pending victim holds a slot on a relevant node.
func (lz *lazyTrial) seen(p lazyVictim) bool {
	for _, ni := range lz.slots[p.lo:p.hi] {
		if lz.nodes[ni].relevant {
			return true
		}
	}
	return false
}

// released reports whether the trial's victim at index x is released in
// the Capacity (lz nil: every one is).
func (lz *lazyTrial) released(x int) bool { return lz == nil || x >= len(lz.out) || lz.out[x] }

// release releases the running job at position k of r.running in the
// Capacity.
func (r *round) release(k int) {
	r.f.stats.Materialised++
	j := r.job(r.running[k])
	r.cap.releaseJobRefs(j, r.victimRefs(k).refs, r.f.util(j))
}
