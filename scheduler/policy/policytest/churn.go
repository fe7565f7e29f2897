package policytest

import (
	"fmt"
	"math/rand/v2"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// ChurnSpec is how a tracked snapshot changes from one decision to the
// next, as a live scheduler's does: a round of Interval passes, every
// running job advances (Executed, Attained, progress), a share of the
// running jobs finishes, new jobs arrive.
type ChurnSpec struct {
	// Interval is the time between decisions (Now advances by it).
	Interval policy.Seconds
	// Finish is the share of running jobs that finish per round.
	Finish float64
	// Arrive is how many jobs are submitted per round.
	Arrive int
	// Jobs shapes the arrivals (FracShare, ElasticShare).
	Jobs RandomSpec
	// Accrue makes running jobs accrue service (policy.Accrual) instead
	// of having it added, and stamped, every round: a running job is then
	// stamped only when something else of it changes.
	Accrue bool
	// SplitProgress stamps a job whose progress moved in
	// Snapshot.ProgressGen instead of JobGen, as the live scheduler does.
	SplitProgress bool
}

// Churn is a snapshot evolving in place between decisions, with
// Snapshot.JobGen and Cluster.Gen kept exactly as their contracts say:
// every change to a job or a node takes a fresh stamp from one counter.
// A finished job stays listed (Finished) for one round; then an arrival
// takes its position, else it stays.
type Churn struct {
	S      *policy.Snapshot
	spec   ChurnSpec
	rng    *rand.Rand
	stamp  uint64
	node   map[string]int
	byID   map[string]int // position of each job
	vacant []vacancy      // positions of finished jobs, oldest first
	born   int
	round  int
	// Changed counts the jobs stamped by the last Step (JobGen), and
	// Progressed those whose ProgressGen alone moved.
	Changed, Progressed int
}

// vacancy is a position whose job finished in round.
type vacancy struct{ pos, round int }

// NewChurn takes s over (it is changed in place from now on) and stamps
// every job and node.
func NewChurn(seed uint64, s *policy.Snapshot, spec ChurnSpec) *Churn {
	c := &Churn{S: s, spec: spec, rng: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d)),
		node: map[string]int{}, byID: map[string]int{}}
	s.JobGen = make([]uint64, len(s.Jobs))
	for i, j := range s.Jobs {
		s.JobGen[i] = c.next()
		c.byID[j.ID] = i
	}
	s.ProgressGen = nil
	if spec.SplitProgress {
		s.ProgressGen = make([]uint64, len(s.Jobs))
		for i := range s.ProgressGen {
			s.ProgressGen[i] = c.next()
		}
	}
	if spec.Accrue {
		for _, j := range s.Jobs {
			if j.State == policy.Running {
				j.Accrual = policy.Accrual{On: true, Since: s.Now, GPUs: j.Placement.GPUs()}
			}
		}
	}
	s.Cluster.Gen = make([]uint64, len(s.Cluster.Nodes))
	for i, n := range s.Cluster.Nodes {
		s.Cluster.Gen[i] = c.next()
		c.node[n.Name] = i
	}
	return c
}

func (c *Churn) next() uint64 { c.stamp++; return c.stamp }

// touch stamps job i changed.
func (c *Churn) touch(i int) { c.S.JobGen[i] = c.next(); c.Changed++ }

// progressed stamps job i's progress moved in ProgressGen where the
// snapshot keeps it apart; else it reports that the job must be stamped
// changed (JobGen), as for any change.
func (c *Churn) progressed(i int) bool {
	if c.S.ProgressGen == nil {
		return true
	}
	c.S.ProgressGen[i] = c.next()
	c.Progressed++
	return false
}

// Step carries out d (as Apply does, in place), then lets a round pass.
func (c *Churn) Step(d policy.Decision) {
	s := c.S
	c.Changed, c.Progressed = 0, 0
	for _, id := range d.Preempts {
		i, ok := c.byID[id]
		if j := s.Jobs[i]; ok && j.State == policy.Running {
			c.hold(j, -1)
			settle(j, s.Now)
			j.Placement = policy.Placement{}
			j.State, j.QueuedSince, j.Preemptions = policy.Queued, s.Now, j.Preemptions+1
			c.touch(i)
		}
	}
	for _, st := range d.Starts {
		i, ok := c.byID[st.JobID]
		if !ok {
			continue
		}
		j := s.Jobs[i]
		if j.State == policy.Running {
			c.hold(j, -1)
			settle(j, s.Now)
		}
		j.State, j.LastStart = policy.Running, s.Now
		j.Placement = policy.Placement{Slots: append([]policy.Slot(nil), st.Placement.Slots...)}
		if c.spec.Accrue {
			j.Accrual = policy.Accrual{On: true, Since: s.Now, GPUs: j.Placement.GPUs()}
		}
		c.hold(j, +1)
		c.touch(i)
	}
	c.advance()
	c.arrive()
}

// advance lets a round pass: running jobs gain service, some finish.
func (c *Churn) advance() {
	s := c.S
	c.round++
	s.Now += c.spec.Interval
	for i, j := range s.Jobs {
		if j.State != policy.Running {
			continue
		}
		moved := !c.spec.Accrue
		if moved {
			j.Executed += c.spec.Interval
			j.Attained += j.Placement.GPUs() * c.spec.Interval
		}
		if n := len(j.Progress); n > 0 {
			last := j.Progress[n-1]
			st := last.Step + 100
			j.Progress = append(j.Progress[:n:n], policy.ProgressPoint{Step: st, Loss: 1/(0.001*st+0.5) + 0.3})
			moved = c.progressed(i) || moved
		}
		if c.rng.Float64() < c.spec.Finish {
			c.hold(j, -1)
			settle(j, s.Now)
			j.State = policy.Finished
			c.vacant = append(c.vacant, vacancy{pos: i, round: c.round})
			moved = true
		}
		if moved {
			c.touch(i)
		}
	}
}

// Finished lists the jobs the last Step finished (listed Finished in S
// until the next), for a caller that feeds a policy its finished jobs
// as they happen (policy.Preparer) rather than from the snapshot.
func (c *Churn) Finished() []*policy.Job {
	var out []*policy.Job
	for _, v := range c.vacant {
		if v.round == c.round {
			out = append(out, c.S.Jobs[v.pos])
		}
	}
	return out
}

// arrive submits new jobs, into positions whose job finished in an
// earlier round (so every snapshot lists a finished job once) first.
func (c *Churn) arrive() {
	s := c.S
	for k := 0; k < c.spec.Arrive; k++ {
		c.born++
		j := randomJob(c.rng, fmt.Sprintf("new%d", c.born), c.spec.Jobs, s.Now)
		j.Submit, j.QueuedSince = s.Now, s.Now
		j.Executed, j.Attained = 0, 0
		j.OracleDuration = c.rng.ExpFloat64() * 5000
		if len(c.vacant) > 0 && c.vacant[0].round < c.round {
			i := c.vacant[0].pos
			c.vacant = c.vacant[1:]
			delete(c.byID, s.Jobs[i].ID)
			s.Jobs[i] = j
			c.byID[j.ID] = i
			c.touch(i)
			continue
		}
		s.Jobs = append(s.Jobs, j)
		s.JobGen = append(s.JobGen, 0)
		if s.ProgressGen != nil {
			s.ProgressGen = append(s.ProgressGen, c.next())
		}
		c.byID[j.ID] = len(s.Jobs) - 1
		c.touch(len(s.Jobs) - 1)
	}
}

// settle folds an accruing running job's service into its fields and
// ends the accrual: it stops running at now.
func settle(j *policy.Job, now policy.Seconds) {
	j.Attained, j.Executed = j.ServiceAt(now)
	j.Accrual = policy.Accrual{}
}

// hold charges (sign +1) or releases (-1) j's slots on their GPUs,
// stamping each node changed.
func (c *Churn) hold(j *policy.Job, sign float64) {
	cl := &c.S.Cluster
	for _, sl := range j.Placement.Slots {
		ni, ok := c.node[sl.Node]
		if !ok {
			continue
		}
		for gi := range cl.Nodes[ni].GPUs {
			if g := &cl.Nodes[ni].GPUs[gi]; g.Index == sl.GPU {
				g.UsedFraction += sign * sl.Fraction
				g.UsedMemoryMiB += int64(sign) * sl.MemMiB
				g.Util += sign * j.Util
			}
		}
		cl.Gen[ni] = c.next()
	}
}
