package live

import (
	"fmt"
	"sort"

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
	CreateIndex    uint64 // a purged and re-created job has a new one
	SubmitTime     int64  // Unix ns of the latest version
	Meta           map[string]string
	// ParameterizedJob marks a template: it never runs itself, only the
	// jobs dispatched from it (e.g. `caravan tune` trials) do.
	ParameterizedJob bool
}

// world is one consistent-enough read of the cluster.
type world struct {
	nodes  map[string]*nodeInfo // usable nodes by ID
	pools  map[string]bool      // node pools Nomad has
	jobs   []*jobStub           // caravan's jobs, by submit time
	allocs map[string][]*api.AllocationListStub
	index  uint64 // Nomad index of the job list, for the event stream
}

// observe reads nodes, caravan's jobs and their allocations from Nomad.
func (s *Scheduler) observe() (*world, error) {
	w := &world{nodes: map[string]*nodeInfo{}, allocs: map[string][]*api.AllocationListStub{}}
	q := &api.QueryOptions{Namespace: s.cfg.Namespace}
	var stubs []*jobStub
	qm, err := s.api.Raw().Query("/v1/jobs?meta=true", &stubs, q)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	w.index = qm.LastIndex
	for _, j := range stubs {
		if s.managed(j) {
			w.jobs = append(w.jobs, j)
		}
	}
	sort.SliceStable(w.jobs, func(a, b int) bool {
		if w.jobs[a].SubmitTime != w.jobs[b].SubmitTime {
			return w.jobs[a].SubmitTime < w.jobs[b].SubmitTime
		}
		return w.jobs[a].ID < w.jobs[b].ID
	})
	if err := s.observeAllocs(w, q); err != nil {
		return nil, err
	}
	if err := s.observePools(w); err != nil {
		return nil, err
	}
	return w, s.observeNodes(w)
}

// observePools lists the node pools, so a job naming a missing one waits
// with that reason instead of failing its admission every round.
func (s *Scheduler) observePools(w *world) error {
	pools, _, err := s.api.NodePools().List(nil)
	if err != nil {
		return fmt.Errorf("list node pools: %w", err)
	}
	w.pools = map[string]bool{allPool: true}
	for _, p := range pools {
		w.pools[p.Name] = true
	}
	return nil
}

// managed: jobs in the queue pool or admitted by caravan; no other job is
// ever touched.
func (s *Scheduler) managed(j *jobStub) bool {
	if j.Type != "batch" && j.Type != "service" || j.ParameterizedJob {
		return false
	}
	return j.NodePool == s.cfg.QueuePool || j.Meta[MetaAdmitted] != ""
}

func (s *Scheduler) observeAllocs(w *world, q *api.QueryOptions) error {
	ids := map[string]bool{}
	for _, j := range w.jobs {
		ids[j.ID] = true
	}
	allocs, _, err := s.api.Allocations().List(q)
	if err != nil {
		return fmt.Errorf("list allocations: %w", err)
	}
	for _, a := range allocs {
		if ids[a.JobID] {
			w.allocs[a.JobID] = append(w.allocs[a.JobID], a)
		}
	}
	return nil
}

func (s *Scheduler) observeNodes(w *world) error {
	stubs, _, err := s.api.Nodes().List(nil)
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	for _, stub := range stubs {
		if stub.NodePool == s.cfg.QueuePool || stub.Status != "ready" {
			continue
		}
		n, _, err := s.api.Nodes().Info(stub.ID, nil)
		if err != nil {
			return fmt.Errorf("read node %s: %w", stub.Name, err)
		}
		if !usable(n) {
			continue
		}
		info, err := parseNode(n)
		if err != nil {
			s.log.Warn("ignoring node with a bad caravan fingerprint", "error", err)
			continue
		}
		if len(info.GPUs) > 0 {
			w.nodes[info.ID] = &info
		}
	}
	return nil
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
