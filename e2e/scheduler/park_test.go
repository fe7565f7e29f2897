package scheduler

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/live"
	"github.com/hashicorp/nomad/api"
)

// A job waiting in caravan-queue (a pool with no nodes) has a blocked
// evaluation that saw no node, so Nomad re-runs it whenever an allocation
// ends anywhere (#20). After -park-after the scheduler parks it in its
// real pool behind ${meta.caravan_parked} is_set: Nomad's evaluation then
// marks every node class ineligible and ended allocations leave it alone,
// until caravan admits it. Re-runs are read from the server's own debug
// log ("dequeued evaluation ... triggered_by=queued-allocs": a blocked
// evaluation taken up again); a job whose caravan.pool does not exist is
// never parked and serves as the control that an unblock did happen.
func TestParkedJobsStayBlockedWhileAllocationsEnd(t *testing.T) {
	p := startScheduler(t, "-policy", "fifo", "-park-after", "15s")
	fillGPUs(t, "fill-a", "fill-b", "fill-c", "fill-d")
	own := "  constraint {\n    attribute = \"${attr.kernel.name}\"\n    value     = \"linux\"\n  }\n"
	gangs := []string{"gang-a", "gang-b"}
	for _, id := range gangs {
		submit(t, work{ID: id, Workers: 3, Seconds: 5, Extra: own})
	}
	submit(t, work{ID: "ctl", Seconds: 1, Meta: map[string]string{"caravan.pool": "no-such-pool"}})
	for _, id := range append(gangs, "ctl") {
		waitFor(t, 30*time.Second, id+" queued with a reason", func() (bool, string) {
			j := p.job(id)
			return j != nil && j.State == "queued" && j.Reason != "", "not in the queue view yet"
		})
	}
	slog := serverLog{t: t, path: cluster.Server.LogPath}

	// Before parking: one freed GPU (a gang needs three) re-runs both.
	off := slog.size()
	purge("fill-a")
	if jobInfo(t, "gang-a").Meta["caravan.parked"] != "" {
		t.Log("the gangs were parked before a filler ended (slow machine): no before-check")
	} else {
		waitFor(t, 20*time.Second, "the queued gangs' evaluations re-run", func() (bool, string) {
			return slog.reruns(off, "gang-a") > 0 && slog.reruns(off, "gang-b") > 0, "no re-run in the server log yet"
		})
	}

	// Parked: in the real pool behind the park constraint, the user's own
	// constraint kept, and a blocked evaluation marking each node's class
	// ineligible; `nomad job status` names the park constraint.
	waitFor(t, 40*time.Second, "both gangs parked", func() (bool, string) {
		for _, id := range gangs {
			j := jobInfo(t, id)
			if *j.NodePool != "default" || j.Meta["caravan.parked"] == "" {
				return false, id + " in pool " + *j.NodePool
			}
			if got := targets(j.Constraints); got != "${attr.kernel.name},${meta.caravan_parked}" {
				return false, id + " constraints " + got
			}
		}
		return true, ""
	})
	classes := nodeClasses(t)
	versions := map[string]uint64{}
	for _, id := range gangs {
		waitClassesIneligible(t, id, classes)
		if f := placementFailure(t, id); !strings.Contains(f, "${meta.caravan_parked}") {
			t.Errorf("%s: the placement failure Nomad shows does not name the park constraint: %q", id, f)
		}
		waitFor(t, 20*time.Second, id+" shown parked, with its reason, in the queue view", func() (bool, string) {
			j := p.job(id)
			return j != nil && j.State == "queued" && j.Parked && j.Reason != "", fmt.Sprintf("%+v", j)
		})
		versions[id] = *jobInfo(t, id).JobModifyIndex
	}
	if j := jobInfo(t, "ctl"); *j.NodePool != "caravan-queue" || j.Meta["caravan.parked"] != "" {
		t.Fatalf("a job whose pool does not exist was parked: pool %s meta %v", *j.NodePool, j.Meta)
	}

	// Parked: an allocation ending (two GPUs free, still too few for a
	// gang) re-runs the control but neither gang.
	off = slog.size()
	purge("fill-b")
	waitFor(t, 20*time.Second, "the control's evaluation re-run and blocked again", func() (bool, string) {
		return slog.reruns(off, "ctl") > 0 && slog.reblocked(off, "ctl"), "not yet"
	})
	// The unblock that took up the control enqueued every woken evaluation
	// at once; give the two workers a moment to drain them before
	// checking none was a gang's.
	time.Sleep(2 * time.Second)
	for _, id := range gangs {
		if n := slog.reruns(off, id); n != 0 {
			t.Errorf("parked %s re-run %d times after an allocation ended", id, n)
		}
		if v := *jobInfo(t, id).JobModifyIndex; v != versions[id] {
			t.Errorf("parked %s rewritten while it could not fit (index %d -> %d)", id, versions[id], v)
		}
	}

	// Capacity for one gang: caravan admits the first parked one, without
	// the park, and it runs; the second stays parked until that one ends.
	purge("fill-c")
	waitFor(t, 30*time.Second, "gang-a admitted", func() (bool, string) {
		return jobInfo(t, "gang-a").Meta["caravan.admitted"] != "", "not yet"
	})
	if j := jobInfo(t, "gang-b"); j.Meta["caravan.parked"] == "" || *j.JobModifyIndex != versions["gang-b"] {
		t.Errorf("gang-b left its parked form while gang-a held the GPUs: meta %v", j.Meta)
	}
	waitDone(t, "gang-a", 3, 60*time.Second)
	j := jobInfo(t, "gang-a")
	if j.Meta["caravan.parked"] != "" || targets(j.Constraints) != "${attr.kernel.name}" {
		t.Fatalf("admitted gang-a: meta %v constraints %s", j.Meta, targets(j.Constraints))
	}
}

// fillGPUs occupies the four GPUs with long single-worker jobs.
func fillGPUs(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		submit(t, work{ID: id, Seconds: 300})
	}
	waitFor(t, 90*time.Second, "four fillers running on the four GPUs", func() (bool, string) {
		n := 0
		for _, id := range ids {
			n += count(allocs(t, id), running)
		}
		return n == 4, clusterState(t)
	})
}

// waitClassesIneligible waits until the blocked evaluation of id's current
// version marks every one of classes ineligible, without escaping them.
func waitClassesIneligible(t *testing.T, id string, classes []string) {
	t.Helper()
	waitFor(t, 20*time.Second, id+"'s blocked evaluation marks every node class ineligible", func() (bool, string) {
		ev := blockedEval(t, id)
		if ev == nil || *jobInfo(t, id).JobModifyIndex > ev.JobModifyIndex {
			return false, "no blocked evaluation of the parked version yet"
		}
		for _, c := range classes {
			if elig, ok := ev.ClassEligibility[c]; !ok || elig {
				return false, "class eligibility " + strings.Join(fmtClasses(ev.ClassEligibility), " ")
			}
		}
		return !ev.EscapedComputedClass, "escaped computed class"
	})
}

func targets(cs []*api.Constraint) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.LTarget)
	}
	return strings.Join(out, ",")
}

// nodeClasses reads each client's computed class (the api package's Node
// has no such field; the HTTP API returns it).
func nodeClasses(t *testing.T) []string {
	t.Helper()
	stubs, _, err := cluster.API.Nodes().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range stubs {
		var n struct{ ComputedClass string }
		if _, err := cluster.API.Raw().Query("/v1/node/"+s.ID, &n, nil); err != nil {
			t.Fatal(err)
		}
		out = append(out, n.ComputedClass)
	}
	return out
}

// blockedEval is a job's newest blocked evaluation, nil if none.
func blockedEval(t *testing.T, id string) *api.Evaluation {
	return newestEval(t, id, func(ev *api.Evaluation) bool { return ev.Status == "blocked" })
}

// newestEval is a job's newest evaluation that keep accepts, nil if none.
func newestEval(t *testing.T, id string, keep func(*api.Evaluation) bool) *api.Evaluation {
	t.Helper()
	evs, _, err := cluster.API.Jobs().Evaluations(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	var newest *api.Evaluation
	for _, ev := range evs {
		if keep(ev) && (newest == nil || ev.CreateIndex > newest.CreateIndex) {
			newest = ev
		}
	}
	return newest
}

// placementFailure is what `nomad job status` prints under "Placement
// Failure": the newest evaluation's filtered constraints.
func placementFailure(t *testing.T, id string) string {
	t.Helper()
	newest := newestEval(t, id, func(ev *api.Evaluation) bool { return len(ev.FailedTGAllocs) > 0 })
	if newest == nil {
		return ""
	}
	var out []string
	for g, m := range newest.FailedTGAllocs {
		for c, n := range m.ConstraintFiltered {
			out = append(out, g+": "+c+" filtered "+strconv.Itoa(n))
		}
	}
	return strings.Join(out, "; ")
}

func fmtClasses(m map[string]bool) []string {
	var out []string
	for c, ok := range m {
		if ok {
			out = append(out, c+"=true")
		} else {
			out = append(out, c+"=false")
		}
	}
	return out
}

// serverLog reads the Nomad server's log (log_level DEBUG in the dev
// cluster) from an offset.
type serverLog struct {
	t    *testing.T
	path string
}

func (l serverLog) size() int64 {
	st, err := os.Stat(l.path)
	if err != nil {
		l.t.Fatal(err)
	}
	return st.Size()
}

func (l serverLog) since(off int64) []string {
	b, err := os.ReadFile(l.path)
	if err != nil {
		l.t.Fatal(err)
	}
	if off > int64(len(b)) {
		off = 0
	}
	return strings.Split(string(b[off:]), "\n")
}

// reruns counts a job's blocked evaluations taken up again by a worker
// since off (a blocked evaluation is triggered by queued-allocs).
func (l serverLog) reruns(off int64, job string) int {
	n := 0
	for _, line := range l.since(off) {
		if strings.Contains(line, "dequeued evaluation") && strings.Contains(line, " job_id="+job+" ") &&
			strings.Contains(line, "triggered_by=queued-allocs") {
			n++
		}
	}
	return n
}

// reblocked reports whether a re-run of job's blocked evaluation ended
// blocked again since off.
func (l serverLog) reblocked(off int64, job string) bool {
	for _, line := range l.since(off) {
		if strings.Contains(line, "reblocked evaluation") && strings.Contains(line, `JobID: \"`+job+`\"`) {
			return true
		}
	}
	return false
}

// A job submitted already parked (its real pool, the park constraint, meta
// caravan.parked: scheduler/live README, "Submitting jobs parked") waits
// as a parked job from its first evaluation, without a park write, and
// is admitted with one write: two job versions and evaluations where a
// job parked from caravan-queue has three.
func TestJobSubmittedParkedIsAdmittedWithOneWrite(t *testing.T) {
	p := startScheduler(t, "-policy", "fifo")
	fillGPUs(t, "full-a", "full-b", "full-c", "full-d")
	submit(t, work{ID: "born", Seconds: 2, Pool: "default", Meta: map[string]string{"caravan.parked": "submitted"}, Extra: live.ParkConstraintHCL})
	waitFor(t, 30*time.Second, "born queued and shown parked", func() (bool, string) {
		j := p.job("born")
		return j != nil && j.State == "queued" && j.Parked && j.Reason != "", fmt.Sprintf("%+v", j)
	})
	waitClassesIneligible(t, "born", nodeClasses(t))
	if v := *jobInfo(t, "born").Version; v != 0 {
		t.Fatalf("a job submitted parked was rewritten while it waited (version %d)", v)
	}
	purge("full-a")
	waitDone(t, "born", 1, 60*time.Second)
	j := jobInfo(t, "born")
	if *j.Version != 1 || j.Meta["caravan.parked"] != "" || targets(j.Constraints) != "" || j.Meta["caravan.admitted"] == "" {
		t.Fatalf("admitted job: version %d, meta %v, constraints %q; want version 1, admitted, not parked",
			*j.Version, j.Meta, targets(j.Constraints))
	}
}
