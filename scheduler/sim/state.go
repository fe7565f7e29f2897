package sim

import (
	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

const eps = 1e-9

// gpuState is the ledger entry of one simulated GPU.
type gpuState struct {
	frac float64
	mem  int64
	util float64
	jobs []*simJob // jobs with a slot here (for interference)
	held int       // stopped jobs' slots still draining (Config.StopLatency)
}

// ledger is the simulator's own record of what is committed where; the
// policy sees a copy in every snapshot and cannot change it.
type ledger struct {
	cluster policy.Cluster
	nodeIdx map[string]int
	gpus    [][]gpuState
	total   int
	// gen counts changes per node (policy.Cluster.Gen), so a policy's
	// capacity view re-reads only the nodes that changed
	gen []uint64
	// snapshot buffers, reused by every decision
	snapNodes []policy.Node
	snapGPUs  []policy.GPU
}

func newLedger(c policy.Cluster) *ledger {
	l := &ledger{cluster: c, nodeIdx: map[string]int{}, gpus: make([][]gpuState, len(c.Nodes)), gen: make([]uint64, len(c.Nodes))}
	for i, n := range c.Nodes {
		l.nodeIdx[n.Name] = i
		l.gpus[i] = make([]gpuState, len(n.GPUs))
		l.total += len(n.GPUs)
	}
	return l
}

// snapshotCluster copies the cluster with current usage filled in. It runs
// at every decision, so the copy reuses one buffer: a snapshot is only
// valid until the next, and every field is rewritten, so a policy that
// scribbles on one cannot change the ledger or the next snapshot.
func (l *ledger) snapshotCluster() policy.Cluster {
	if len(l.snapNodes) != len(l.cluster.Nodes) {
		l.snapNodes = make([]policy.Node, len(l.cluster.Nodes))
		l.snapGPUs = make([]policy.GPU, l.total)
	}
	flat := l.snapGPUs[:0]
	for i, n := range l.cluster.Nodes {
		start := len(flat)
		flat = append(flat, n.GPUs...)
		n.GPUs = flat[start:len(flat):len(flat)]
		for g := range n.GPUs {
			st := &l.gpus[i][g]
			n.GPUs[g].UsedFraction = st.frac
			n.GPUs[g].UsedMemoryMiB = st.mem
			n.GPUs[g].Util = st.util
		}
		l.snapNodes[i] = n
	}
	return policy.Cluster{Nodes: l.snapNodes, Gen: l.gen}
}

func (l *ledger) add(j *simJob, s policy.Slot, sign float64) {
	ni := l.nodeIdx[s.Node]
	l.gen[ni]++
	st := &l.gpus[ni][s.GPU]
	st.frac += sign * s.Fraction
	st.mem += int64(sign) * s.MemMiB
	st.util += sign * j.slotUtil(s)
	if sign > 0 {
		st.jobs = append(st.jobs, j)
		return
	}
	for i, o := range st.jobs {
		if o == j {
			st.jobs = append(st.jobs[:i], st.jobs[i+1:]...)
			break
		}
	}
	if len(st.jobs) == 0 && st.held == 0 { // clear float dust
		st.frac, st.mem, st.util = 0, 0, 0
	}
}

// hold keeps (sign > 0) or frees a stopped job's slots: their fraction and
// memory stay used, but nothing runs there (no utilisation, no interference).
func (l *ledger) hold(p policy.Placement, sign int) {
	for _, s := range p.Slots {
		ni := l.nodeIdx[s.Node]
		l.gen[ni]++
		st := &l.gpus[ni][s.GPU]
		st.frac += float64(sign) * s.Fraction
		st.mem += int64(sign) * s.MemMiB
		st.held += sign
		if len(st.jobs) == 0 && st.held == 0 {
			st.frac, st.mem, st.util = 0, 0, 0
		}
	}
}

// drain is a stopped job's placement still held until a time.
type drain struct {
	p     policy.Placement
	until float64
}

func (l *ledger) commit(j *simJob, p policy.Placement) {
	for _, s := range p.Slots {
		l.add(j, s, 1)
	}
}

func (l *ledger) release(j *simJob, p policy.Placement) {
	for _, s := range p.Slots {
		l.add(j, s, -1)
	}
}

// simJob is a job's full simulated state; pj is what policies see.
type simJob struct {
	pj   policy.Job
	spec *Job
	// remaining work (seconds at speed 1) and current speed.
	remaining, speed float64
	pspeed           float64 // placement speed, fixed while the placement is
	slotNode         []int   // node index of each slot
	curve            *profile.Curve
	steps            float64 // total training steps (for progress points)
	gpus             float64 // GPU share held while running
	firstStart       float64
	warmUntil        float64 // no progress before this (Config.StartLatency)
	finish           float64
	started, done    bool
	resumePenalty    bool // preempted since it last ran
	nextMark         float64
	// pos is the job's index in the snapshot's jobs, dirty that it waits
	// for a fresh stamp (jobgen.go)
	pos   int
	dirty bool
}

// slotUtil is the demand one slot puts on its GPU: the job's utilisation
// for the share it holds.
func (j *simJob) slotUtil(s policy.Slot) float64 {
	u := j.spec.Util
	if u <= 0 {
		u = s.Fraction
	}
	return min(u, 1)
}
