package live

import (
	"sort"

	"github.com/hashicorp/nomad/api"
)

// The mirror's orders: jobs by submit time then ID (the queue's FIFO
// order and the order classify walks), each job's allocations by create
// index then ID (as Nomad lists them, so what picks "the first" picks the
// same one as a full read would). Events keep them by binary search, a
// full reconcile sorts once.

func jobBefore(a, b *jobStub) bool {
	if a.SubmitTime != b.SubmitTime {
		return a.SubmitTime < b.SubmitTime
	}
	return a.ID < b.ID
}

func allocBefore(a, b *api.AllocationListStub) bool {
	if a.CreateIndex != b.CreateIndex {
		return a.CreateIndex < b.CreateIndex
	}
	return a.ID < b.ID
}

// putJob adds or replaces a job.
func (m *mirror) putJob(j *jobStub) {
	m.dropJob(j.ID)
	m.jobs[j.ID] = j
	m.touchJob(j.ID)
	if len(m.order) != len(m.jobs)-1 {
		m.order = nil // out of step (bulk load): resorted by world
		return
	}
	i := sort.Search(len(m.order), func(i int) bool { return !jobBefore(m.order[i], j) })
	m.order = append(m.order, nil)
	copy(m.order[i+1:], m.order[i:])
	m.order[i] = j
}

// dropJob removes a job.
func (m *mirror) dropJob(id string) {
	old := m.jobs[id]
	if old == nil {
		return
	}
	delete(m.jobs, id)
	m.touchJob(id)
	i := sort.Search(len(m.order), func(i int) bool { return !jobBefore(m.order[i], old) })
	if i < len(m.order) && m.order[i] == old {
		m.order = append(m.order[:i], m.order[i+1:]...)
	} else {
		m.order = nil
	}
}

// resort rebuilds the job order from the job map.
func (m *mirror) resort() {
	m.order = make([]*jobStub, 0, len(m.jobs))
	for _, j := range m.jobs {
		m.order = append(m.order, j)
	}
	sort.Slice(m.order, func(a, b int) bool { return jobBefore(m.order[a], m.order[b]) })
	m.epoch++
}

// putAlloc adds or replaces an allocation (its job never changes).
func (m *mirror) putAlloc(a *api.AllocationListStub) {
	m.allocs[a.ID] = a
	m.touchJob(a.JobID)
	if m.byJob == nil {
		return // regrouped by world
	}
	as := m.byJob[a.JobID]
	for i, o := range as {
		if o.ID == a.ID {
			as = append(as[:i:i], as[i+1:]...) // a copy: a round may hold the old slice
			break
		}
	}
	i := sort.Search(len(as), func(i int) bool { return !allocBefore(as[i], a) })
	out := make([]*api.AllocationListStub, 0, len(as)+1)
	out = append(append(append(out, as[:i]...), a), as[i:]...)
	m.byJob[a.JobID] = out
}

// regroup rebuilds every job's allocation list from the allocation map.
func (m *mirror) regroup() {
	m.byJob = map[string][]*api.AllocationListStub{}
	m.epoch++
	for _, a := range m.allocs {
		m.byJob[a.JobID] = append(m.byJob[a.JobID], a)
	}
	for _, as := range m.byJob {
		sort.Slice(as, func(i, j int) bool { return allocBefore(as[i], as[j]) })
	}
}

// stubsOf is the stubs of the given jobs the mirror holds.
func (m *mirror) stubsOf(ids map[string]bool) []*jobStub {
	out := make([]*jobStub, 0, len(ids))
	for id := range ids {
		if j := m.jobs[id]; j != nil {
			out = append(out, j)
		}
	}
	return out
}
