package policy

import "strconv"

// preemptFor tries to make ranked[i] fit by releasing running jobs ranked
// below it, lowest priority first. It preempts only if the gang then fits,
// and afterwards gives back every victim the new placement did not use.
// Victims are released in doubling batches (1, 2, 4, ...) between placement
// attempts, so a trial costs O(log victims) placer calls. Where the victims
// hold whole GPUs the placer may then use any released victim's GPUs, so a
// victim up to twice as deep in the list as strictly needed can be chosen
// (for a better placement); where one shares a GPU, the fewest victims
// with which the gang still fits are found by bisecting the batch that
// fitted (preempt_fewest.go), so a victim is preempted only where every
// job ranked below it could not make room.
func (r *round) preemptFor(i int, d Demand, m *shapeMemo, placeFail *failure) (Placement, *failure) {
	if m.preempt.valid(r.cap.Epoch) {
		return Placement{}, m.preempt
	}
	epoch := r.cap.Epoch
	r.sortVictims(i)
	// The cheap check is memoised too: within an epoch free capacity only
	// shrinks and later ranks have less held below them.
	// A demand harder than one whose trial failed completely fails too
	// (preempt_bound.go, futile): hopeless, as by the sums.
	if !m.hopeless && r.cap.FreeSum()+r.held.sumFrom(i+1)+eps >= d.GPUs() && !r.futile(i, d, placeFail) {
		r.failed.clean, r.failed.released = false, -1
		p, ok, complete := r.tryVictims(i, d)
		if ok {
			return p, nil
		}
		r.cap.Epoch = epoch // capacity is exactly as before the trial
		m.hopeless = complete
		if complete {
			r.failed.note(d)
			if r.held.sumFrom(i+1) > maxHeldCounted {
				r.f.failedBig.note(r.job(i).ID) // counted next round (futile)
			}
		}
	} else {
		m.hopeless = true // the sum only shrinks for later ranks (see hopeless)
	}
	m.preempt = &failure{epoch: epoch, reason: placeFail.reason + " (preempting lower-priority jobs would not make it fit)"}
	return Placement{}, m.preempt
}

// tryVictims releases victims below rank i in doubling batches until the
// gang places; on failure it re-commits them all. complete reports a
// failure with every victim released (or none to release): the gang did
// not fit even then.
func (r *round) tryVictims(i int, d Demand) (p Placement, ok, complete bool) {
	j := r.job(i)
	victims := r.victims[:0] // positions in r.running
	defer func() { r.victims = victims[:0] }()
	if t := r.trials; t != nil && t.on && r.cap.residents == nil { // preempt_memo.go
		key := r.trialKeyOf(d, j)
		if p, ok, complete, hit := r.replayTrial(t, key, i, j); hit {
			r.f.stats.Replayed++
			return p, ok, complete
		}
		epoch0 := r.cap.Epoch
		r.cap.beginRecord()
		r.settled = r.settled[:0] // settle lists its preemptions
		defer func() { r.recordTrial(t, key, victims, r.settled, p, ok, complete, epoch0) }()
	} else if t != nil {
		defer func() { t.big = t.big || len(victims) >= minTrialVictims }()
	}
	st := &r.f.stats
	st.Trials++
	r.lz = r.lazyFor(d) // preempt_lazy.go
	r.countFits(d)      // preempt_fit.go
	batch, tested := 1, true
	lastTest := 0   // victims released at the last failed test
	shared := false // a victim so far holds a share of a GPU
	fit := 0        // the fewest victims with which the gang fits by count (0: not yet; -1: not counted)
	for k := r.live(len(r.running) - 1); k >= 0 && r.running[k] > i; k = r.live(k - 1) {
		vr := r.victimRefs(k)  // kept for the round: the job is not read again
		if len(vr.refs) == 0 { // a ref per slot: no placement to release
			continue
		}
		if r.lz != nil && !r.lazyAdd(len(victims), vr) {
			r.lz.flush(r.cap, true) // not exact, or not worth it: as before from here
			r.lz = nil              // every victim so far is out
		}
		if r.lz == nil {
			r.release(k)
		}
		victims, tested, shared = append(victims, k), false, shared || vr.shares1()
		st.Victims, st.VictimSlots = st.Victims+1, st.VictimSlots+len(vr.refs)
		if fit == 0 && r.lz.fits() {
			fit = len(victims)
		}
		if fit > 0 && shared { // where the batch's bisection would end (preempt_fit.go)
			if p, all, ok := r.fitNow(j, d, victims, k, i, batch, fit); ok {
				victims = all // the batch, as the trial memo records it
				return p, true, false
			}
			fit = -1 // test as before from here
		}
		if len(victims) < batch && k > 0 && r.running[k-1] > i {
			continue // keep releasing until the batch is complete
		}
		batch *= 2
		tested = true
		if r.lz != nil {
			// shortOf with every victim so far out, or the count short
			if r.lz.short() || fit == 0 && r.lz.counted() {
				r.failed.clean, lastTest = true, len(victims)
				continue
			}
			r.lz.flush(r.cap, false) // what the placer sees
		} else if shortOf(d, r.cap) != "" {
			r.failed.clean, lastTest = true, len(victims)
			continue
		}
		p, bad, counted := r.trialTest(j, d, shared && len(victims)-lastTest > 1) // fewest bisects
		if bad == "" && (counted || len(p.Slots) == d.Workers) && r.commitTrial(j, d, victims, lastTest, shared, counted, &p) {
			return p, true, false
		}
		r.failed.clean = bad != "" // not a placement the Capacity rejected
		lastTest = len(victims)
	}
	if tested { // every victim is out: what a later trial can reach at most
		if r.lz != nil {
			r.failed.released = r.lz.wholeFlushed() // pending victims count as out
		} else {
			r.failed.released = r.cap.WholeFree()
		}
	}
	r.restore(victims)
	return Placement{}, false, tested
}

// commitTrial commits the gang's placement p once a batch of victims let
// it fit, with the fewest of them that do where one shares a GPU
// (preempt_fewest.go; lastTest victims did not), and keeps preempted the
// victims p uses. counted: the batch's test was the placer's fit count
// (trialTest), and fewest places the gang. false, with every victim
// released again, where that placement fails or the Capacity rejects p.
func (r *round) commitTrial(j *Job, d Demand, victims []int, lastTest int, shared, counted bool, p *Placement) bool {
	n, placed := len(victims), true
	if shared {
		n, placed = r.fewest(j, d, victims, lastTest, counted, p)
	}
	if !placed || r.cap.commitPlaced(j, *p, r.f.util(j)) != nil {
		r.releasedTo(victims, n, len(victims))
		return false
	}
	r.settle(j, *p, victims[:n])
	r.keepRefs(j, *p, victims[:n])
	return true
}

// settle keeps preempted only the victims (positions in r.running) whose
// GPUs p actually uses; the others are re-committed untouched (highest
// priority first). p was just committed by commitPlaced, whose resolved
// slots r.cap.placed holds.
func (r *round) settle(j *Job, p Placement, victims []int) {
	r.settled = r.settled[:0]
	// a lazy trial writes the victims put back at the end
	defer r.lz.sync(r.cap)
	// p's GPUs are its writer's stamped ones (usesGang), else marked,
	// else a map of them by name
	gen := r.cap.placedGang
	marked := gen != 0 || r.cap.markUsed(r.cap.placed)
	var used map[gpuKey]bool
	if !marked {
		used = make(map[gpuKey]bool, len(p.Slots))
		for _, s := range p.Slots {
			used[gpuKey{s.Node, s.GPU}] = true
		}
	}
	for k := len(victims) - 1; k >= 0; k-- {
		v := r.job(r.running[victims[k]])
		var hit bool
		switch {
		case gen != 0:
			hit = usesGang(r.victimRefs(victims[k]).refs, gen)
		case marked:
			hit = r.cap.usesMarked(r.victimRefs(victims[k]).refs)
		default:
			hit = uses(used, v.Placement)
		}
		out := r.lz.released(k)
		if !hit && (!out || r.giveBack(victims, k) == nil) {
			continue // never released (lazy) or back in place
		}
		if !out { // cannot happen (see lazyTrial): keep the books right
			r.release(victims[k])
		}
		r.settled = append(r.settled, int32(k))
		r.preempt(victims[k], j)
	}
}

// preempt records the victim at position k of r.running as preempted for
// j.
func (r *round) preempt(k int, j *Job) {
	rank := r.running[k]
	v := r.job(rank)
	r.preempted[rank] = true
	r.skip[k] = int32(k) - 1 // live passes it from now on
	r.victimGen++
	// what indexVictims added: no second sum over the victim's slots
	r.held.add(rank, -r.holds(rank))
	r.dec.Preempts = append(r.dec.Preempts, v.ID)
	// given even without reasons: the live scheduler shows a preempted
	// job why, and a round may decide without reasons (few of these)
	r.dec.Waiting = append(r.dec.Waiting, Wait{JobID: v.ID, Reason: "preempted for higher-priority job " + j.ID})
}

// live is the highest position at or below k in r.running whose job is
// not preempted, -1 if none. A round of mass preemption (lucid's
// profiling runs ending, ~11,000 at once at 10,000 nodes) had every
// trial step over all the victims preempted before it, lowest first:
// quadratic. Preempted positions link to the one below (preempt), and
// the walk halves the paths it takes.
func (r *round) live(k int) int {
	s := r.skip
	for k >= 0 {
		p := int(s[k])
		if p == k {
			return k
		}
		if p >= 0 {
			s[k] = s[p] // positions s[p]+1 .. k are all preempted
		}
		k = p
	}
	return -1
}

func (r *round) restore(victims []int) {
	for k := len(victims) - 1; k >= 0; k-- {
		if r.lz.released(k) {
			_ = r.giveBack(victims, k)
		}
	}
	r.lz.sync(r.cap)
}

// giveBack re-commits the released victim at index x of the trial's
// list: a lazy trial at its next sync (preempt_lazy_sync.go), else now.
func (r *round) giveBack(victims []int, x int) error {
	r.f.stats.GivenBack++
	if r.lz != nil {
		r.lz.putBack(x)
		return nil
	}
	return r.recommit(victims[x])
}

// recommit commits the released victim at position k of r.running back.
func (r *round) recommit(k int) error {
	j, vr := r.job(r.running[k]), r.victimRefs(k)
	return r.cap.commitJobRefs(j, vr.refs, vr.err, r.f.util(j))
}

type gpuKey struct {
	node string
	gpu  int
}

// uses reports whether p has a slot on any GPU in the set.
func uses(set map[gpuKey]bool, p Placement) bool {
	for _, s := range p.Slots {
		if set[gpuKey{s.Node, s.GPU}] {
			return true
		}
	}
	return false
}

// ClusterLimits are the static bounds that decide "can never fit";
// compute them once per decision with LimitsOf.
type ClusterLimits struct {
	gpus   int
	maxMem int64
}

// LimitsOf measures a cluster's total GPUs and largest GPU memory.
func LimitsOf(c *Cluster) ClusterLimits {
	var l ClusterLimits
	for _, n := range c.Nodes {
		for _, g := range n.GPUs {
			l.gpus++
			if g.MemoryMiB > l.maxMem {
				l.maxMem = g.MemoryMiB
			}
		}
	}
	return l
}

// Never explains why a gang can never fit, or returns "".
func (l ClusterLimits) Never(d Demand) string {
	if d.GPUs() > float64(l.gpus)+eps {
		return "can never fit: needs " + d.String() + ", cluster has " + strconv.Itoa(l.gpus) + " GPUs"
	}
	if d.MemMiB > l.maxMem {
		return "can never fit: needs " + strconv.FormatInt(d.MemMiB, 10) + " MiB per GPU, largest GPU has " +
			strconv.FormatInt(l.maxMem, 10) + " MiB"
	}
	// a GPU hosts at most 1/Fraction workers: 80,001 workers of three
	// quarters of a GPU never fit 80,000 GPUs, though their share does
	if per := (Demand{Workers: 1, Fraction: d.Fraction}).FitsOn(&FreeGPU{Free: 1}); d.Workers > per*l.gpus {
		return "can never fit: needs " + strconv.Itoa(d.Workers) + " workers of " + strconv.FormatFloat(d.Fraction, 'g', 4, 64) +
			" GPU, at most " + strconv.Itoa(per) + " to a GPU, cluster has " + strconv.Itoa(l.gpus) + " GPUs"
	}
	return ""
}

// NeverFits explains why a gang can never fit the cluster, or returns "".
func NeverFits(c *Cluster, d Demand) string { return LimitsOf(c).Never(d) }
