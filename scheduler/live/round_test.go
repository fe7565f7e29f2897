package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// A round over slowRound logs where its time went, stage by stage; a
// quick one logs nothing.
func TestSlowRoundLogsItsStages(t *testing.T) {
	s, _ := observeScheduler(t)
	var buf bytes.Buffer
	s.log = hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info})
	// The fake serves no state store: a round's (background) state write
	// fails, which the round after reports; the rounds themselves run.
	_, _ = s.round()
	if strings.Contains(buf.String(), "slow round") {
		t.Fatalf("a quick round logged as slow: %s", buf.String())
	}
	// The scheduler's clock moves 2 s at every reading: the round's start
	// and end are far apart.
	at := time.Unix(1000, 0)
	s.now = func() time.Time { at = at.Add(2 * time.Second); return at }
	_, _ = s.round()
	out := buf.String()
	if !strings.Contains(out, "slow round") {
		t.Fatalf("a slow round logged nothing: %q", out)
	}
	for _, stage := range []string{"observe=", "classify=", "unplaced=", "park=", "save="} {
		if !strings.Contains(out, stage) {
			t.Fatalf("slow round line lacks %s: %q", stage, out)
		}
	}
}

// The clock adds a stage's time across marks and keeps first-run order.
func TestRoundClockSumsStagesInOrder(t *testing.T) {
	s := testScheduler(t)
	c := s.clock()
	for _, st := range []string{"observe", "classify", "decide", "classify"} {
		c.last = c.last.Add(-10 * time.Millisecond)
		c.mark(st)
	}
	if strings.Join(c.names, " ") != "observe classify decide" || c.took[1] < 20*time.Millisecond ||
		c.took[1] >= c.took[0]+c.took[2]+10*time.Millisecond || !strings.HasPrefix(c.String(), "observe=") {
		t.Fatalf("stages %q: %v", c.String(), c.took)
	}
}

// The full jobs a round lacks (a reconcile listed jobs whose events had
// not arrived) are read jobReaders at once, each once; cached ones and
// stopped ones are not read.
func TestMissingFullJobsAreReadTogether(t *testing.T) {
	var reads atomic.Int64
	var p peak
	s := schedulerOn(t, func(w http.ResponseWriter, r *http.Request) {
		id, ok := strings.CutPrefix(r.URL.Path, "/v1/job/")
		if !ok {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusBadRequest)
			return
		}
		reads.Add(1)
		p.enter()
		defer p.leave()
		time.Sleep(20 * time.Millisecond)
		job := testJob(id, map[string]any{"command": "x", "gpus": 1})
		job.JobModifyIndex = ptr(uint64(7))
		_ = json.NewEncoder(w).Encode(job)
	})
	var stubs []*jobStub
	for i := range 3 * jobReaders {
		stubs = append(stubs, &jobStub{ID: fmt.Sprintf("j%d", i), Type: "batch", NodePool: "caravan-queue", JobModifyIndex: 7})
	}
	stubs = append(stubs, &jobStub{ID: "stopped", Type: "batch", NodePool: "caravan-queue", JobModifyIndex: 7, Stop: true})
	s.readJobs(stubs)
	if reads.Load() != 3*jobReaders || p.most.Load() < 2 || p.most.Load() > jobReaders {
		t.Fatalf("%d reads, at most %d at once", reads.Load(), p.most.Load())
	}
	for _, j := range stubs[:3*jobReaders] {
		if c := s.fullJob(j); c.err != nil || c.job == nil {
			t.Fatalf("%s not cached: %+v", j.ID, c)
		}
	}
	s.readJobs(stubs)
	if reads.Load() != 3*jobReaders {
		t.Fatalf("cached jobs read again: %d reads", reads.Load())
	}
}
