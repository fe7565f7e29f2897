package fluid

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/optimus"
)

// Policy is the fluid policy: ordinary jobs (no Group) go to the inner
// policy first; the whole GPUs left over (with those the trials already
// hold) are shared equally among tuning groups, oldest group first, and
// each group's share is re-planned by PlanGroup on every decision, so a
// finished or promoted trial re-levels its group. A trial whose slots are
// unchanged is left alone; a changed one is restarted (resized) with its
// new slots; one the plan no longer serves is preempted.
type Policy struct {
	cfg   Config
	inner policy.Policy
	// fits caches each trial's speed fit while its step times stand still:
	// NNLS per trial per decision was a third of a decision.
	fits, nextFits map[string]fit
}

type fit struct {
	obs   map[int]policy.Seconds
	speed optimus.Speed
}

// New wraps inner (the ordering and placement of ordinary jobs).
func New(cfg Config, inner policy.Policy) *Policy {
	return &Policy{cfg: cfg.withDefaults(), inner: inner, fits: map[string]fit{}, nextFits: map[string]fit{}}
}

// Name is "fluid+<placement>", with the mode for a baseline, e.g.
// "fluid(whole-gpu)+consolidated".
func (p *Policy) Name() string {
	name := "fluid"
	if p.cfg.Mode != WaterFill {
		name += "(" + p.cfg.Mode.String() + ")"
	}
	if _, place, ok := strings.Cut(p.inner.Name(), "+"); ok {
		name += "+" + place
	}
	return name
}

// ObserveFinished forwards to the inner policy when it learns.
func (p *Policy) ObserveFinished(j *policy.Job) {
	if fo, ok := p.inner.(policy.FinishObserver); ok {
		fo.ObserveFinished(j)
	}
}

// Prepare forwards to the inner policy when it prepares (policy.Preparer).
func (p *Policy) Prepare() {
	if pr, ok := p.inner.(policy.Preparer); ok {
		pr.Prepare()
	}
}

// Idle forwards to the inner policy where it has one (policy.Idler).
func (p *Policy) Idle() { policy.IdleBetween(p.inner) }

type gpuKey struct {
	node string
	gpu  int
}

// Decide plans ordinary jobs with the inner policy and each group with
// PlanGroup. The inner policy keeps to the start budget
// (Snapshot.MaxStarts); a group's plan is not cut, since a start in it
// may take GPUs another of its moves frees.
func (p *Policy) Decide(s *policy.Snapshot) policy.Decision {
	groups, order := groupTrials(s.Jobs)
	if len(groups) == 0 {
		return p.inner.Decide(s)
	}
	sub := *s
	sub.JobGen = nil // a subset of the jobs: not the caller's positions
	sub.Cluster = withoutTrials(s.Cluster, s.Jobs)
	sub.Jobs = make([]*policy.Job, 0, len(s.Jobs))
	for _, j := range s.Jobs {
		if GroupOf(j) == "" {
			sub.Jobs = append(sub.Jobs, j)
		}
	}
	d := p.inner.Decide(&sub)
	free := freeWholeGPUs(&sub, d)
	shares := share(free, groups, order)
	for _, g := range order {
		p.decideGroup(&d, groups[g], shares[g])
	}
	p.fits, p.nextFits = p.nextFits, p.fits // keep only trials still active
	clear(p.nextFits)
	return d
}

// speedOf is Optimus' fit of the job's step times, cached.
func (p *Policy) speedOf(j *policy.Job) optimus.Speed {
	f, ok := p.fits[j.ID]
	if !ok || !maps.Equal(f.obs, j.StepTimes) {
		f = fit{obs: maps.Clone(j.StepTimes), speed: optimus.FitSpeed(j.StepTimes)}
	}
	p.nextFits[j.ID] = f
	return f.speed
}

// GroupOf is a job's tuning group: Job.Group, else, for a Nomad job
// dispatched from a parameterized job ("<parent>/dispatch-…") or a trial
// `caravan tune run` registered from one for the queue ("<parent>/trial-…"),
// the parent's ID; "" for ordinary jobs.
func GroupOf(j *policy.Job) string {
	if j.Group != "" {
		return j.Group
	}
	for _, infix := range []string{"/dispatch-", "/trial-"} {
		if parent, _, ok := strings.Cut(j.ID, infix); ok && parent != "" {
			return parent
		}
	}
	return ""
}

// groupTrials collects active trials by group; order lists groups by
// their oldest trial's submit time, then name.
func groupTrials(jobs []*policy.Job) (map[string][]*policy.Job, []string) {
	groups := map[string][]*policy.Job{}
	first := map[string]float64{}
	var order []string
	for _, j := range jobs {
		g := GroupOf(j)
		if g == "" || j.State == policy.Finished {
			continue
		}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
			first[g] = j.Submit
		}
		groups[g] = append(groups[g], j)
		first[g] = min(first[g], j.Submit)
	}
	sort.SliceStable(order, func(a, b int) bool {
		if first[order[a]] != first[order[b]] {
			return first[order[a]] < first[order[b]]
		}
		return order[a] < order[b]
	})
	for _, g := range order {
		ts := groups[g]
		sort.SliceStable(ts, func(a, b int) bool {
			if ts[a].Submit != ts[b].Submit {
				return ts[a].Submit < ts[b].Submit
			}
			return ts[a].ID < ts[b].ID
		})
	}
	return groups, order
}

// withoutTrials copies the cluster with running trials' shares released:
// the group's GPUs are re-planned every decision.
func withoutTrials(c policy.Cluster, jobs []*policy.Job) policy.Cluster {
	out := policy.Cluster{Nodes: make([]policy.Node, len(c.Nodes))}
	at := map[gpuKey]*policy.GPU{}
	for i, n := range c.Nodes {
		n.GPUs = append([]policy.GPU(nil), n.GPUs...)
		out.Nodes[i] = n
		for k := range n.GPUs {
			at[gpuKey{n.Name, n.GPUs[k].Index}] = &out.Nodes[i].GPUs[k]
		}
	}
	for _, j := range jobs {
		if GroupOf(j) == "" || j.State != policy.Running {
			continue
		}
		for _, sl := range j.Placement.Slots {
			if g := at[gpuKey{sl.Node, sl.GPU}]; g != nil {
				g.UsedFraction = max(0, g.UsedFraction-sl.Fraction)
				g.UsedMemoryMiB = max(0, g.UsedMemoryMiB-sl.MemMiB)
			}
		}
	}
	return out
}

// freeWholeGPUs lists GPUs with nothing on them after the inner decision,
// in cluster order, with their memory.
func freeWholeGPUs(s *policy.Snapshot, d policy.Decision) []freeGPU {
	used := map[gpuKey]bool{}
	for _, st := range d.Starts {
		for _, sl := range st.Placement.Slots {
			used[gpuKey{sl.Node, sl.GPU}] = true
		}
	}
	preempted := map[string]bool{}
	for _, id := range d.Preempts {
		preempted[id] = true
	}
	released := map[gpuKey]policy.Slot{}
	for _, j := range s.Jobs {
		if preempted[j.ID] {
			for _, sl := range j.Placement.Slots {
				k := gpuKey{sl.Node, sl.GPU}
				r := released[k]
				r.Fraction += sl.Fraction
				r.MemMiB += sl.MemMiB
				released[k] = r
			}
		}
	}
	var out []freeGPU
	for _, n := range s.Cluster.Nodes {
		for _, g := range n.GPUs {
			k := gpuKey{n.Name, g.Index}
			r := released[k]
			if !used[k] && g.UsedFraction-r.Fraction < 1e-9 && g.UsedMemoryMiB-r.MemMiB <= 0 {
				out = append(out, freeGPU{key: k, mem: g.MemoryMiB})
			}
		}
	}
	return out
}

type freeGPU struct {
	key gpuKey
	mem int64
}

// share splits the free GPUs equally among groups (the first groups get
// the remainder), each group first taking back GPUs its trials hold.
func share(free []freeGPU, groups map[string][]*policy.Job, order []string) map[string][]freeGPU {
	out := map[string][]freeGPU{}
	quota := map[string]int{}
	for i, g := range order {
		quota[g] = len(free) / len(order)
		if i < len(free)%len(order) {
			quota[g]++
		}
	}
	owner := map[gpuKey]string{}
	for _, g := range order {
		for _, j := range groups[g] {
			if j.State == policy.Running {
				for _, sl := range j.Placement.Slots {
					owner[gpuKey{sl.Node, sl.GPU}] = g
				}
			}
		}
	}
	taken := make([]bool, len(free))
	for i, f := range free {
		if g, ok := owner[f.key]; ok && len(out[g]) < quota[g] {
			out[g] = append(out[g], f)
			taken[i] = true
		}
	}
	for _, g := range order {
		for i, f := range free {
			if len(out[g]) >= quota[g] {
				break
			}
			if !taken[i] {
				out[g] = append(out[g], f)
				taken[i] = true
			}
		}
	}
	return out
}

// decideGroup plans one group on its GPUs and adds the changes to d.
func (p *Policy) decideGroup(d *policy.Decision, trials []*policy.Job, gpus []freeGPU) {
	pool := Pool{Count: len(gpus), MemMiB: minMem(gpus)}
	in := make([]Trial, len(trials))
	byID := make(map[string]*policy.Job, len(trials))
	where := make(map[gpuKey]int, len(gpus))
	for i, g := range gpus {
		where[g.key] = i
	}
	for i, j := range trials {
		in[i] = trialOf(j, p.speedOf(j))
		p.cfg.Profiles.fill(j, &in[i])
		if j.State == policy.Running {
			for _, sl := range j.Placement.Slots {
				if k, ok := where[gpuKey{sl.Node, sl.GPU}]; ok {
					in[i].Current = append(in[i].Current, k)
				}
			}
		}
		byID[j.ID] = j
	}
	plan := PlanGroup(pool, in, p.cfg)
	util := make(map[string]float64, len(in))
	for _, t := range in {
		util[t.ID] = t.util()
	}
	for _, a := range plan.Allocs {
		j := byID[a.ID]
		pl := policy.Placement{Slots: make([]policy.Slot, 0, len(a.GPUs))}
		for _, gi := range a.GPUs {
			pl.Slots = append(pl.Slots, policy.Slot{Node: gpus[gi].key.node, GPU: gpus[gi].key.gpu, Fraction: a.Fraction, MemMiB: j.MemMiB})
		}
		if j.State == policy.Running && (samePlacement(j.Placement, pl) || widensOnly(j.Placement, pl, util[j.ID])) {
			continue
		}
		d.Starts = append(d.Starts, policy.Start{JobID: j.ID, Placement: pl})
	}
	for _, id := range plan.Waiting {
		j := byID[id]
		if j.State == policy.Running {
			d.Preempts = append(d.Preempts, id)
			continue
		}
		d.Waiting = append(d.Waiting, policy.Wait{JobID: id, Reason: fmt.Sprintf(
			"fluid: tuning job %s has %d GPU(s) for %d trial(s)", GroupOf(j), pool.Count, len(trials))})
	}
}

// TrialOf is what the planner knows of a trial job: its memory, observed
// utilisation (else its model's built-in profile's at its batch size),
// Optimus speed fit from observed step times, the steps its tuner says it
// has left, and its worker cap (MaxWorkers if elastic, else its gang size).
func TrialOf(j *policy.Job) Trial {
	t := trialOf(j, optimus.FitSpeed(j.StepTimes))
	BuiltinProfiles().fill(j, &t)
	return t
}

func trialOf(j *policy.Job, speed optimus.Speed) Trial {
	capW := j.MaxWorkers
	if capW <= 0 { // not elastic: its gang size is fixed
		capW = max(1, j.Workers)
	}
	return Trial{ID: j.ID, MemMiB: j.MemMiB, Util: j.Util, Speed: speed, Observed: j.StepTimes, Remaining: j.StepsLeft, MaxWorkers: capW}
}

func minMem(gpus []freeGPU) int64 {
	var m int64
	for i, g := range gpus {
		if i == 0 || g.mem < m {
			m = g.mem
		}
	}
	return m
}

// widensOnly: the new placement is the old one's GPUs with larger
// fractions, and the trial's utilisation fits its old fraction. A bigger
// share cannot speed it up, and the change is a restart (the last trial of
// a rung left alone on a packed GPU would otherwise be restarted to own
// it); it keeps running as it is.
func widensOnly(old, new policy.Placement, util float64) bool {
	if len(old.Slots) != len(new.Slots) || len(old.Slots) == 0 {
		return false
	}
	for i, o := range old.Slots {
		n := new.Slots[i]
		if o.Node != n.Node || o.GPU != n.GPU || n.Fraction < o.Fraction || util > o.Fraction+1e-9 {
			return false
		}
	}
	return true
}

// samePlacement compares slots as sets (node, GPU, fraction).
func samePlacement(a, b policy.Placement) bool {
	if len(a.Slots) != len(b.Slots) {
		return false
	}
	type k struct {
		node string
		gpu  int
		frac float64
	}
	have := make(map[k]int, len(a.Slots))
	for _, s := range a.Slots {
		have[k{s.Node, s.GPU, s.Fraction}]++
	}
	for _, s := range b.Slots {
		key := k{s.Node, s.GPU, s.Fraction}
		if have[key] == 0 {
			return false
		}
		have[key]--
	}
	return true
}
