package live

import (
	"sort"
	"strings"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// QueueView is what GET /v1/queue returns.
type QueueView struct {
	Leader bool       `json:"leader"`
	Policy string     `json:"policy"`
	At     time.Time  `json:"at"`
	Jobs   []QueueJob `json:"jobs"`
}

// QueueJob is one job as the scheduler sees it.
type QueueJob struct {
	ID    string `json:"id"`
	State string `json:"state"` // queued, running, finished, failed, stopped
	// Rank is the policy's priority (0 = next); -1 when the policy has no
	// ordering to ask or the job is not schedulable.
	Rank        int     `json:"rank"`
	Queue       int     `json:"queue"`
	Workers     int     `json:"workers"`
	Fraction    float64 `json:"fraction"`
	Attained    float64 `json:"attained_gpu_seconds"`
	Executed    float64 `json:"executed_seconds"`
	WaitSeconds float64 `json:"wait_seconds,omitempty"`
	Preemptions int     `json:"preemptions"`
	Placement   string  `json:"placement,omitempty"`
	// Step and Loss are the newest line of the job's progress file.
	Step   *float64 `json:"step,omitempty"`
	Loss   *float64 `json:"loss,omitempty"`
	Reason string   `json:"reason,omitempty"`
	// Parked: the queued job waits in its real pool behind caravan's park
	// constraint (park.go); State stays "queued".
	Parked bool `json:"parked,omitempty"`
}

// buildView summarises a round for the API, highest priority first.
func buildView(pol string, es []*entry, ranking []policy.Rank, waiting map[string]string, now time.Time) *QueueView {
	v := &QueueView{Leader: true, Policy: pol, At: now.UTC(), Jobs: make([]QueueJob, 0, len(es))}
	rk := make(map[string]int, len(ranking))
	for i, r := range ranking {
		rk[r.JobID] = i
	}
	for _, e := range es {
		r := e.rec
		q := QueueJob{ID: e.stub.ID, State: e.phase.String(), Rank: -1, Attained: r.Attained,
			Executed: r.Executed, Preemptions: r.Preemptions}
		if i, ok := rk[e.stub.ID]; ok {
			q.Rank, q.Queue = i, ranking[i].Queue
		}
		if e.job != nil && e.job.err == nil {
			q.Workers, q.Fraction = len(e.job.gang.Workers), e.job.gang.Fraction
		}
		switch e.phase {
		case phaseQueued:
			q.Reason = oneLine(reasonFor(e, waiting))
			q.Parked = e.stub.Meta[MetaParked] != ""
			if r.QueuedSince > 0 {
				q.WaitSeconds = unix(now) - r.QueuedSince
			}
		case phaseDone:
			if e.failed != "" {
				q.State, q.Reason = "failed", oneLine(e.failed)
			}
		case phaseRunning:
			q.Placement = e.stub.Meta[MetaPlacement]
			if e.badPlacement != "" {
				q.Placement = e.badPlacement
			}
		}
		v.Jobs = append(v.Jobs, q)
	}
	sort.SliceStable(v.Jobs, func(a, b int) bool { return less(v.Jobs[a], v.Jobs[b]) })
	return v
}

// less orders running before queued, then by rank, unranked last.
func less(a, b QueueJob) bool {
	if oa, ob := stateOrder(a.State), stateOrder(b.State); oa != ob {
		return oa < ob
	}
	if (a.Rank < 0) != (b.Rank < 0) {
		return a.Rank >= 0
	}
	return a.Rank < b.Rank
}

// stateOrder is where a state's jobs come in the view (a switch: a map
// built per comparison was most of an idle round at scale).
func stateOrder(state string) int {
	switch state {
	case "running":
		return 0
	case "queued":
		return 1
	case "failed":
		return 2
	case "finished":
		return 3
	case "stopped":
		return 4
	}
	return 5
}

// reasonFor says why a queued job still waits.
func reasonFor(e *entry, waiting map[string]string) string {
	switch {
	case e.job == nil:
		return "not read yet"
	case e.job.err != nil:
		return "invalid: " + e.job.err.Error()
	case e.unfit != "":
		return e.unfit
	case waiting[e.stub.ID] != "":
		return waiting[e.stub.ID]
	case e.allocs.draining > 0:
		return "preempted; checkpointing before it can be resumed"
	}
	return "waiting for the next scheduling round"
}

// maxReason bounds a reason in the queue view.
const maxReason = 240

// oneLine keeps a reason to one short line: Nomad's errors can carry a
// whole multi-line server response.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > maxReason {
		s = strings.ToValidUTF8(s[:maxReason-3], "") + "..."
	}
	return s
}
