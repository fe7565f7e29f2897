package live

import (
	"time"

	"github.com/hashicorp/nomad/api"
)

// jobStub is a job list entry. The api package's stub drops NodePool,
// which the HTTP API does return, so the list is decoded into this.
type jobStub struct {
	ID             string
	Namespace      string
	Type           string
	Status         string
	NodePool       string
	Stop           bool
	JobModifyIndex uint64
	ModifyIndex    uint64 // any change, status included
	CreateIndex    uint64 // a purged and re-created job has a new one
	SubmitTime     int64  // Unix ns of the latest version
	Meta           map[string]string
	// ParameterizedJob marks a template: it never runs itself, only the
	// jobs dispatched from it (e.g. `caravan tune` trials) do.
	ParameterizedJob bool
}

// world is one round's view of the cluster.
type world struct {
	nodes  map[string]*nodeInfo // usable nodes by ID
	pools  map[string]bool      // node pools Nomad has
	jobs   []*jobStub           // caravan's jobs, by submit time
	allocs map[string][]*api.AllocationListStub
	index  uint64    // Nomad index the view is at
	sets   *nodeSets // memoised node sets of nodes (nodesets.go)
}

// catchUpWait bounds how long a round waits for the events of the
// scheduler's own last writes before it reads everything instead.
const catchUpWait = 3 * time.Second

// observe brings the mirror up to date and returns the round's view of it:
// the events that arrived since the last round are applied, and a full
// reconcile replaces the mirror when there is none yet, the stream broke,
// an event could not be read, the events lag behind the scheduler's own
// writes, or Config.ReconcileEvery has passed.
func (s *Scheduler) observe() (*world, error) {
	if _, err := s.observeMirror(); err != nil {
		return nil, err
	}
	return s.mirror.world(s.managed), nil
}

// observeMirror is observe without the list of managed jobs, which the
// incremental round keeps itself (incremental.go).
func (s *Scheduler) observeMirror() (*world, error) {
	evs, broke := s.feed.drain()
	// A need for a full read outlives a failed attempt (the server may
	// be the thing that is down).
	s.needFull = s.needFull || broke || s.mirror == nil
	if !s.needFull {
		s.needFull = !s.applyEvents(evs) || !s.catchUp()
	}
	if s.needFull {
		s.bg = nil // this read supersedes one in flight
		m, err := s.reconcile()
		if err != nil {
			return nil, err
		}
		s.setMirror(m, s.now())
	} else {
		s.reconcileBeside() // the periodic read (reconcile_beside.go)
	}
	s.observePools()
	return s.mirror.world(nil), nil
}

// missingPool reports whether a managed job that has not finished names
// (or defaults to) a node pool the mirror does not know.
func (s *Scheduler) missingPool() bool {
	for _, j := range s.mirror.jobs {
		if j.Status != "dead" && s.managed(j) && !s.mirror.pools[s.namedPool(j.Meta)] {
			return true
		}
	}
	return false
}

// poolsEvery bounds how often the jobs are checked for a pool the mirror
// lacks, and so how often pools are listed between full reconciles.
const poolsEvery = 2 * time.Second

// observePools lists the node pools again when a job names one the mirror
// lacks: pools are not on the event stream (see streamTopics), and a user
// who creates the missing pool should not wait for Config.ReconcileEvery.
// A deleted pool is seen at the next full reconcile; until then admitting
// into it fails in Nomad, which the job's waiting reason shows. The check
// reads every job, so it runs at most every poolsEvery, not every round
// (at 10,000 jobs it was a tenth of the scheduler's CPU).
func (s *Scheduler) observePools() {
	if s.now().Sub(s.poolsChecked) < poolsEvery {
		return
	}
	s.poolsChecked = s.now()
	if !s.missingPool() {
		return
	}
	if err := s.listPools(s.mirror); err != nil {
		s.log.Debug("listing node pools", "error", err)
	}
}

// applyEvents folds events into the mirror; false means one could not be
// read, so the mirror may miss a change.
func (s *Scheduler) applyEvents(evs []event) bool {
	s.keepForReplay(evs)
	ok := true
	for i := range evs {
		changed, err := s.applyEvent(s.mirror, &evs[i])
		switch {
		case err != nil:
			s.log.Warn("unreadable event; reading everything afresh", "topic", evs[i].Topic, "error", err)
			ok = false
		case changed:
			s.metrics.eventsApplied.Inc()
		default:
			s.metrics.eventsIgnored.Inc()
		}
	}
	return ok
}

// catchUp waits until the mirror holds the scheduler's own latest write,
// so a round never decides on a view older than its own admissions and
// preemptions. False: the stream broke or lagged too long.
func (s *Scheduler) catchUp() bool {
	if s.mirror.caughtUp(s.wrote) {
		return true
	}
	t := time.NewTimer(catchUpWait)
	defer t.Stop()
	for !s.mirror.caughtUp(s.wrote) {
		select {
		case <-s.feed.more:
		case <-t.C:
			return false
		}
		evs, broke := s.feed.drain()
		if broke || !s.applyEvents(evs) {
			return false
		}
	}
	return true
}

// noteWrite records the Nomad index of a write of ours.
// Admissions write concurrently (apply.go); the round reads wrote after
// they all returned.
func (s *Scheduler) noteWrite(index uint64) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.wrote = max(s.wrote, index)
}

// managed: jobs in the queue pool, parked or admitted by caravan; no other
// job is ever touched.
func (s *Scheduler) managed(j *jobStub) bool {
	if j.Type != "batch" && j.Type != "service" || j.ParameterizedJob {
		return false
	}
	return j.NodePool == s.cfg.QueuePool || j.Meta[MetaAdmitted] != "" || j.Meta[MetaParked] != ""
}

// live reports whether an allocation holds resources on its node.
func live(a *api.AllocationListStub) bool {
	return a.ClientStatus == "pending" || a.ClientStatus == "running"
}

// jobAllocs summarises a job's allocations.
type jobAllocs struct {
	running  int // desired run and running
	starting int // desired run and pending
	draining int // told to stop but still holding resources
}

func summarise(as []*api.AllocationListStub) jobAllocs {
	var s jobAllocs
	for _, a := range as {
		switch {
		case !live(a):
		case a.DesiredStatus != "run":
			s.draining++
		case a.ClientStatus == "running":
			s.running++
		default:
			s.starting++
		}
	}
	return s
}
