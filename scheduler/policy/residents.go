package policy

// ResidentTracker is implemented by placers that need to know which jobs
// a partly used GPU holds, not just how busy it is (pairwise interference
// bounds). The framework then fills Capacity's residents from the
// snapshot's running jobs and keeps them current as gangs are committed
// and released in the round; other placers pay nothing.
type ResidentTracker interface {
	TracksResidents() bool
}

// gpuPos is a GPU's position in a Capacity: node index, GPU index in it.
type gpuPos [2]int

// TrackResidents records, per GPU, the running jobs of jobs placed on it,
// replacing what was tracked before. Slots on unknown nodes or GPUs are
// skipped (the job then counts only where it can be found).
func (c *Capacity) TrackResidents(jobs []*Job) {
	c.residents = map[gpuPos][]*Job{}
	for _, j := range jobs {
		if j != nil && j.State == Running {
			c.addResident(j, j.Placement)
		}
	}
}

// Residents lists the jobs on GPU gi of node ni, in the order they were
// placed; nil when none or when residents are not tracked.
func (c *Capacity) Residents(ni, gi int) []*Job {
	if c.residents == nil {
		return nil
	}
	return c.residents[gpuPos{ni, gi}]
}

// CommitJob is Commit that also records j on the placement's GPUs when
// residents are tracked.
func (c *Capacity) CommitJob(j *Job, p Placement, util float64) error {
	if err := c.Commit(p, util); err != nil {
		return err
	}
	if c.residents != nil {
		c.addResident(j, p)
	}
	return nil
}

// commitPlaced is CommitJob of a new gang p, keeping its resolved slots
// in c.placed (for markUsed) instead of resolving them by node name again.
func (c *Capacity) commitPlaced(j *Job, p Placement, util float64) error {
	refs, checked, gen := c.noted(p) // written resolved (capacity_gang.go)
	var rerr error
	if gen == 0 {
		refs, rerr = c.resolve(p, c.placed[:0])
	}
	c.placed, c.placedGang = refs, gen
	if err := c.commitRefs(p, refs, rerr, util, checked); err != nil {
		return err
	}
	if c.residents != nil {
		c.addResident(j, p)
	}
	return nil
}

// ReleaseJob is Release of j's placement that also forgets j there.
func (c *Capacity) ReleaseJob(j *Job, util float64) {
	c.Release(j.Placement, util)
	c.forget(j)
}

// commitJobRefs is CommitJob of j's own placement, resolved to refs
// (rerr: resolve's error).
func (c *Capacity) commitJobRefs(j *Job, refs []slotRef, rerr error, util float64) error {
	if err := c.commitRefs(j.Placement, refs, rerr, util, false); err != nil {
		return err
	}
	if c.residents != nil {
		c.addResident(j, j.Placement)
	}
	return nil
}

// releaseJobRefs is ReleaseJob with j's placement resolved to refs.
func (c *Capacity) releaseJobRefs(j *Job, refs []slotRef, util float64) {
	c.releaseRefs(j.Placement, refs, util)
	c.forget(j)
}

// forget drops j from the residents of its placement's GPUs.
func (c *Capacity) forget(j *Job) {
	if c.residents == nil {
		return
	}
	for _, s := range j.Placement.Slots {
		if k, ok := c.pos(s); ok {
			c.residents[k] = removeJob(c.residents[k], j)
		}
	}
}

func (c *Capacity) addResident(j *Job, p Placement) {
	for _, s := range p.Slots {
		k, ok := c.pos(s)
		if !ok || containsJob(c.residents[k], j) { // a gang's workers may share a GPU
			continue
		}
		c.residents[k] = append(c.residents[k], j)
	}
}

// pos finds a slot's GPU.
func (c *Capacity) pos(s Slot) (gpuPos, bool) {
	ni, ok := c.nodeOf(s.Node)
	if !ok {
		return gpuPos{}, false
	}
	for k := range c.Nodes[ni].GPUs {
		if c.Nodes[ni].GPUs[k].Index == s.GPU {
			return gpuPos{ni, k}, true
		}
	}
	return gpuPos{}, false
}

func containsJob(js []*Job, j *Job) bool {
	for _, x := range js {
		if x == j {
			return true
		}
	}
	return false
}

func removeJob(js []*Job, j *Job) []*Job {
	out := js[:0]
	for _, x := range js {
		if x != j {
			out = append(out, x)
		}
	}
	return out
}

// tracksResidents says whether the placer asks for residents.
func (f *Framework) tracksResidents() bool {
	t, ok := f.Place.(ResidentTracker)
	return ok && t.TracksResidents()
}
