package policy

import "strconv"

// round is the state of one Decide call.
type round struct {
	f    *Framework
	s    *Snapshot
	cap  *Capacity
	dec  Decision
	fit  ClusterLimits
	memo map[ShapeKey]failure // placement failures, valid while Epoch holds
	// noPreempt memoises shapes that failed even with preemption at some
	// rank: later ranks have fewer victims, so they fail too.
	noPreempt map[ShapeKey]failure
	preempted map[string]bool
	held      *fenwick // GPU share of preemptable running jobs by rank
	ranked    []Ranked
	running   []int        // ranks of preemptable running jobs, ascending
	rank      map[*Job]int // rank of each preemptable running job
}

type failure struct {
	epoch  int
	reason string
}

func newRound(f *Framework, s *Snapshot) *round {
	return &round{
		f:         f,
		s:         s,
		cap:       NewCapacity(&s.Cluster),
		dec:       Decision{Waiting: make(map[string]string, len(s.Jobs))},
		fit:       LimitsOf(&s.Cluster),
		memo:      map[ShapeKey]failure{},
		noPreempt: map[ShapeKey]failure{},
		preempted: map[string]bool{},
	}
}

// walk visits the ranked jobs; batch placers get windows of queued jobs.
func (r *round) walk(ranked []Ranked) {
	r.ranked = ranked
	if r.f.Order.Preemptive() {
		r.held = newFenwick(len(ranked))
		r.rank = map[*Job]int{}
		for i, rk := range ranked {
			if rk.Job.State == Running && r.f.canPreempt(rk.Job, r.s.Now) {
				r.held.add(i, placementGPUs(rk.Job.Placement))
				r.running = append(r.running, i)
				r.rank[rk.Job] = i
			}
		}
	}
	hol, batch := r.f.blocksHead(), r.f.batchSize()
	behind := 0 // queued jobs waiting ahead, under head-of-line blocking
	for i := 0; i < len(ranked); i++ {
		j := ranked[i].Job
		if j.State != Queued {
			continue
		}
		d, ok := r.admissible(ranked[i])
		if !ok {
			continue
		}
		if behind > 0 {
			r.wait(j, "head-of-line blocked: behind "+strconv.Itoa(behind)+" waiting job(s) in FIFO order")
			behind++
			continue
		}
		if batch > 1 && !hol {
			i = r.batchFrom(i, batch)
			continue
		}
		if !r.admit(i, d) && hol {
			behind = 1
		}
	}
}

// admissible validates a queued job and rules out gangs that can never fit.
func (r *round) admissible(rk Ranked) (Demand, bool) {
	d, err := DemandOf(rk.Job)
	if err != nil {
		r.wait(rk.Job, "invalid request: "+err.Error())
		return d, false
	}
	if why := r.fit.Never(d); why != "" {
		r.wait(rk.Job, why)
		return d, false
	}
	return d, true
}

// admit tries to start ranked[i], preempting if the ordering allows.
func (r *round) admit(i int, d Demand) bool {
	j := r.ranked[i].Job
	p, why := r.place(j, d)
	if why != "" && r.f.Order.Preemptive() {
		p, why = r.preemptFor(i, d, why)
	}
	if why != "" {
		r.wait(j, r.queuePrefix(i)+why)
		return false
	}
	r.dec.Starts = append(r.dec.Starts, Start{JobID: j.ID, Placement: p})
	return true
}

// place asks the placer for a gang and commits it, memoising failures.
func (r *round) place(j *Job, d Demand) (Placement, string) {
	key := r.f.Place.Shape(j, d)
	if m, ok := r.memo[key]; ok && m.epoch == r.cap.Epoch {
		return Placement{}, m.reason
	}
	p, why := r.tryPlace(j, d)
	if why != "" {
		r.memo[key] = failure{r.cap.Epoch, why}
	}
	return p, why
}

func (r *round) tryPlace(j *Job, d Demand) (Placement, string) {
	if why := shortOf(d, r.cap); why != "" {
		return Placement{}, why
	}
	p, why := r.f.Place.Place(j, d, r.cap)
	if why != "" {
		return Placement{}, why
	}
	if len(p.Slots) != d.Workers {
		return Placement{}, "placer " + r.f.Place.Name() + " returned " + strconv.Itoa(len(p.Slots)) +
			" slots for " + strconv.Itoa(d.Workers) + " workers"
	}
	if err := r.cap.Commit(p, r.f.util(j)); err != nil {
		return Placement{}, "placer " + r.f.Place.Name() + " chose an invalid placement: " + err.Error()
	}
	return p, ""
}

// shortOf is the cheap aggregate check: not enough free GPU in total.
func shortOf(d Demand, c *Capacity) string {
	if d.WholeGPU() {
		if d.Workers > c.WholeFree() {
			return "needs " + d.String() + ", " + strconv.Itoa(c.WholeFree()) + " free"
		}
		return ""
	}
	if d.GPUs() > c.FreeSum()+eps {
		return "needs " + d.String() + ", " + strconv.FormatFloat(c.FreeSum(), 'f', 2, 64) + " GPU free"
	}
	return ""
}

func (r *round) wait(j *Job, why string) { r.dec.Waiting[j.ID] = why }

func (r *round) queuePrefix(i int) string {
	if q := r.ranked[i].Queue; q > 0 || r.hasQueues() {
		return "queue " + strconv.Itoa(q) + ": "
	}
	return ""
}

func (r *round) hasQueues() bool {
	_, ok := r.f.Order.(interface{ Queues() int })
	return ok
}

func placementGPUs(p Placement) float64 {
	s := 0.0
	for _, sl := range p.Slots {
		s += sl.Fraction
	}
	return s
}
