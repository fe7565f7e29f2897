package scale

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// A job's way from submit to running, step by step, read back from Nomad
// after the run (job versions, evaluations, allocations), so a gap in the
// placement rate can be put on one step instead of guessed:
//
//	submitted → admitted (the version caravan wrote; = submitted straight
//	to Nomad) → the eval that placed it created → its allocs created (eval
//	waited in the broker and ran) → all workers running (clients).
//
// The placing eval is the one named by the job's allocations.

// stepNames, in order; each step is the time from the previous mark.
var stepNames = []string{"submit→admitted", "admitted→placing eval created", "eval created→allocs created", "allocs created→running"}

// timeline is the steps of every job, and what the evaluations were.
type timeline struct {
	steps     [][]time.Duration // per step, one per job
	evals     []int             // evaluations per job
	triggered map[string]int    // placing evals by TriggeredBy
	statuses  map[string]int    // all evals by TriggeredBy/Status
	late      []string          // the slowest jobs' marks
}

// jobTimeline reads every gang's versions, evaluations and allocations
// and puts its time on the steps (after the run: it is not timed).
func jobTimeline(c *harness.Cluster, gangs []gang, submitted, started map[string]time.Time, queued bool) timeline {
	tl := timeline{steps: make([][]time.Duration, len(stepNames)), triggered: map[string]int{}, statuses: map[string]int{}}
	allocs := map[string][]*api.AllocationListStub{}
	if stubs, _, err := c.API.Allocations().List(nil); err == nil {
		for _, a := range stubs {
			allocs[a.JobID] = append(allocs[a.JobID], a)
		}
	}
	type slow struct {
		total time.Duration
		line  string
	}
	var slowest []slow
	for _, g := range gangs {
		marks, line, ok := jobMarks(c, g.ID, submitted[g.ID], started[g.ID], allocs[g.ID], queued, &tl)
		if !ok {
			continue
		}
		for i := range stepNames {
			tl.steps[i] = append(tl.steps[i], marks[i+1].Sub(marks[i]))
		}
		slowest = append(slowest, slow{marks[len(marks)-1].Sub(marks[0]), g.ID + ": " + line})
	}
	sort.Slice(slowest, func(i, j int) bool { return slowest[i].total > slowest[j].total })
	for i := 0; i < len(slowest) && i < 5; i++ {
		tl.late = append(tl.late, slowest[i].line)
	}
	return tl
}

// jobMarks is one job's five marks (see stepNames), a line describing
// them, and whether Nomad still had everything needed.
func jobMarks(c *harness.Cluster, id string, sub, run time.Time, allocs []*api.AllocationListStub, queued bool, tl *timeline) ([]time.Time, string, bool) {
	evals, _, err := c.API.Jobs().Evaluations(id, nil)
	if err != nil || len(allocs) == 0 || run.IsZero() {
		return nil, "", false
	}
	tl.evals = append(tl.evals, len(evals))
	byID := map[string]*api.Evaluation{}
	for _, e := range evals {
		byID[e.ID] = e
		tl.statuses[e.TriggeredBy+"/"+e.Status]++
	}
	admitted := sub
	if queued {
		if admitted, err = admittedAt(c, id); err != nil {
			return nil, "", false
		}
	}
	// The placing eval of the newest allocs (a job placed twice counts its
	// last placement).
	sort.Slice(allocs, func(i, j int) bool { return allocs[i].CreateTime < allocs[j].CreateTime })
	last := allocs[len(allocs)-1]
	ev := byID[last.EvalID]
	if ev == nil {
		return nil, "", false
	}
	tl.triggered[ev.TriggeredBy]++
	marks := []time.Time{sub, admitted, time.Unix(0, ev.CreateTime), time.Unix(0, last.CreateTime), run}
	line := fmt.Sprintf("%d evals, placed by %s eval; steps", len(evals), ev.TriggeredBy)
	for i := 1; i < len(marks); i++ {
		line += fmt.Sprintf(" %s", marks[i].Sub(marks[i-1]).Round(10*time.Millisecond))
	}
	return marks, line, true
}

// admittedAt is when caravan's admitting version of the job was written:
// the newest version outside the queue pool.
func admittedAt(c *harness.Cluster, id string) (time.Time, error) {
	versions, _, _, err := c.API.Jobs().Versions(id, false, nil)
	if err != nil {
		return time.Time{}, err
	}
	for _, v := range versions { // newest first
		if v.NodePool != nil && *v.NodePool != "caravan-queue" && v.SubmitTime != nil {
			return time.Unix(0, *v.SubmitTime), nil
		}
	}
	return time.Time{}, fmt.Errorf("job %s: no admitted version", id)
}

// String prints each step's p50/p90/p99/max/sum, the evals per job, and
// the slowest jobs.
func (tl timeline) String() string {
	var b strings.Builder
	for i, name := range stepNames {
		fmt.Fprintf(&b, "  %-30s %s\n", name, latencies(tl.steps[i]))
	}
	sort.Ints(tl.evals)
	if n := len(tl.evals); n > 0 {
		sum := 0
		for _, e := range tl.evals {
			sum += e
		}
		fmt.Fprintf(&b, "  evaluations per job: mean %.1f, p50 %d, p99 %d, max %d\n", float64(sum)/float64(n),
			tl.evals[n/2], tl.evals[n*99/100], tl.evals[n-1])
	}
	fmt.Fprintf(&b, "  placing evals by trigger: %v\n  all evals by trigger/status: %v\n", tl.triggered, tl.statuses)
	for _, l := range tl.late {
		fmt.Fprintf(&b, "  slow: %s\n", l)
	}
	return b.String()
}
