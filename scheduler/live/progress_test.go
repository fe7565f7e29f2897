package live

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/hashicorp/nomad/api"
)

func TestParseProgressSkipsBadLinesAndKeepsTornOnes(t *testing.T) {
	in := strings.Join([]string{
		`{"step": 1, "loss": 2.5, "samples": 32}`,
		``,
		`not json`,
		`{"loss": 1}`,                  // no step
		`{"step": -1, "loss": 1}`,      // negative step
		`{"step": 2, "loss": "x"}`,     // wrong type
		`{"step": 1e999, "loss": 1}`,   // not finite
		`{"step": 3, "loss": 0.5}`,     // samples optional
		`{"step": 4, "loss": 0.4, "sa`, // torn: completed by the next read
	}, "\n")
	pts, rest, bad, skip := parseProgress([]byte(in))
	want := []policy.ProgressPoint{{Step: 1, Loss: 2.5, Samples: 32}, {Step: 3, Loss: 0.5}}
	if fmt.Sprint(pts) != fmt.Sprint(want) {
		t.Fatalf("points %v, want %v", pts, want)
	}
	if bad != 5 || skip {
		t.Fatalf("bad %d skip %v, want 5 bad lines, no skipping", bad, skip)
	}
	pts, rest, bad, _ = parseProgress(append(rest, []byte("mples\": 64}\n")...))
	if len(pts) != 1 || pts[0] != (policy.ProgressPoint{Step: 4, Loss: 0.4, Samples: 64}) || len(rest) != 0 || bad != 0 {
		t.Fatalf("completed line: %v rest %q bad %d", pts, rest, bad)
	}
}

func TestParseProgressOverlongLine(t *testing.T) {
	long := `{"step": 1, "note": "` + strings.Repeat("x", maxProgressLine) + `"}`
	pts, _, bad, _ := parseProgress([]byte(long + "\n" + `{"step": 2}` + "\n"))
	if bad != 1 || len(pts) != 1 || pts[0].Step != 2 {
		t.Fatalf("a long complete line: pts %v bad %d", pts, bad)
	}
	_, rest, bad, skip := parseProgress([]byte(long)) // no newline yet
	if bad != 1 || !skip || rest != nil {
		t.Fatalf("a long torn line must be dropped and skipped: rest %d bytes, bad %d, skip %v", len(rest), bad, skip)
	}
	after, found := skipLine([]byte(`xxx"}` + "\n" + `{"step": 5}` + "\n"))
	if !found {
		t.Fatal("newline not found")
	}
	if pts, _, bad, _ := parseProgress(after); bad != 0 || len(pts) != 1 || pts[0].Step != 5 {
		t.Fatalf("after the skipped line: %v bad %d", pts, bad)
	}
}

func TestProgressLearnsStepTimeAndStaysBounded(t *testing.T) {
	var p progress
	p.add([]policy.ProgressPoint{{Step: 10, Loss: 1}}, 100, 2)
	if len(p.stepTimes) != 0 {
		t.Fatal("one read cannot give a rate")
	}
	p.add([]policy.ProgressPoint{{Step: 20, Loss: 0.9}, {Step: 30, Loss: 0.8}}, 110, 2) // 20 steps in 10 s
	if st := p.stepTimes[2]; st != 0.5 {
		t.Fatalf("step time at 2 workers %v, want 0.5 s", st)
	}
	for i := 0; i < 5000; i++ {
		p.add([]policy.ProgressPoint{{Step: float64(31 + i), Loss: 0.5}}, 111+float64(i), 2)
	}
	if len(p.points) > maxProgressPoints {
		t.Fatalf("%d points kept, bound %d", len(p.points), maxProgressPoints)
	}
	if first, last := p.points[0].Step, p.points[len(p.points)-1].Step; first != 10 || last != 5030 {
		t.Fatalf("thinning must keep the curve's ends: %v … %v", first, last)
	}
	var j policy.Job
	p.fill(&j)
	if len(j.Progress) != len(p.points) || j.StepTimes[2] <= 0 {
		t.Fatalf("fill: %d points, step times %v", len(j.Progress), j.StepTimes)
	}
	j.Progress[0].Step = -1
	if p.points[0].Step == -1 {
		t.Fatal("the policy's job must get a copy")
	}
}

func TestParseTargetLoss(t *testing.T) {
	if v, err := parseTargetLoss(""); v != 0 || err != nil {
		t.Fatalf("empty: %v %v", v, err)
	}
	if v, err := parseTargetLoss(" 0.05 "); v != 0.05 || err != nil {
		t.Fatalf("0.05: %v %v", v, err)
	}
	for _, bad := range []string{"x", "-1", "0", "NaN", "Inf"} {
		if _, err := parseTargetLoss(bad); err == nil || !strings.Contains(err.Error(), MetaTargetLoss) {
			t.Errorf("%q: error %v should name %s", bad, err, MetaTargetLoss)
		}
	}
}

// Reads arrive in pieces: a line split across reads is parsed once whole,
// an overlong line is skipped across reads, and a new allocation starts
// its file from the beginning while the job's curve continues.
func TestConsumeAcrossReads(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Token = "t"
	s, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tg := progressTarget{job: "j", alloc: "a1", task: "t", workers: 1}
	p := &progress{}
	feed := func(alloc, data string, now float64) {
		tg.alloc = alloc
		cur := p.cursor(alloc)
		s.consume(p, tg, cur, []byte(data), now)
	}
	feed("a1", `{"step": 1, "loss": 1}`+"\n"+`{"step": 2, "lo`, 1)
	feed("a1", `ss": 0.5}`+"\n", 2)
	long := `{"step": 3, "x": "` + strings.Repeat("y", maxProgressLine+10)
	feed("a1", long, 3)
	feed("a1", `tail"}`+"\n"+`{"step": 4, "loss": 0.25}`+"\n", 4)
	if p.offset != int64(len(`{"step": 1, "loss": 1}`+"\n"+`{"step": 2, "lo`+`ss": 0.5}`+"\n"+long+`tail"}`+"\n"+`{"step": 4, "loss": 0.25}`+"\n")) {
		t.Fatalf("offset %d does not count every byte read", p.offset)
	}
	feed("a2", `{"step": 5, "loss": 0.2}`+"\n", 10) // resumed: a new file
	if p.offset != int64(len(`{"step": 5, "loss": 0.2}`+"\n")) {
		t.Fatalf("a new allocation must be read from its start, offset %d", p.offset)
	}
	var steps []float64
	for _, pt := range p.points {
		steps = append(steps, pt.Step)
	}
	if fmt.Sprint(steps) != "[1 2 4 5]" || p.bad != 1 {
		t.Fatalf("steps %v bad %d, want [1 2 4 5] and the overlong line counted once", steps, p.bad)
	}
	if got := counterValue(s.metrics.progressBad); got != 1 {
		t.Fatalf("bad-lines metric %v", got)
	}
}

func FuzzParseProgressLine(f *testing.F) {
	for _, s := range []string{`{"step":1,"loss":0.5}`, `{"step":-1}`, `{"loss":1}`, `not json`, `{"step":1e400}`, `{"step":3,"samples":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseProgressLine(b)
		if err != nil {
			return
		}
		if p.Step < 0 || math.IsNaN(p.Step) || math.IsInf(p.Step, 0) || math.IsNaN(p.Loss) || math.IsInf(p.Loss, 0) {
			t.Fatalf("%q accepted as %+v", b, p)
		}
	})
}

func FuzzParseProgress(f *testing.F) {
	for _, s := range []string{"{\"step\":1}\n{\"step\":2}\n{\"st", "\n\n", "x\n{\"step\":0}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pts, rest, bad, skip := parseProgress(b)
		if bad < 0 || len(rest) > maxProgressLine || (skip && rest != nil) || len(pts) > len(b) {
			t.Fatalf("%q: %d points, rest %d bytes, bad %d, skip %v", b, len(pts), len(rest), bad, skip)
		}
	})
}

// A finished job's last allocation is read once more, so the queue shows
// where it ended rather than the last poll before (bug: a stale step).
func TestFinishedJobGetsOneFinalProgressRead(t *testing.T) {
	s := testScheduler(t)
	g := gang{Workers: []worker{{Group: "w0", Task: "work"}}, Fraction: 1}
	e := &entry{stub: &jobStub{ID: "j"}, phase: phaseDone, rec: &record{}, job: &cachedJob{gang: g}}
	allocs := map[string][]*api.AllocationListStub{"j": {{ID: "a1", NodeID: "n1", TaskGroup: "w0", ClientStatus: "complete"}}}
	s.progress.jobs["j"] = &progress{alloc: "a1", offset: 40}
	s.progressTargets([]*entry{e}, allocs)
	if ts := s.progress.targets; len(ts) != 1 || !ts[0].final || ts[0].alloc != "a1" || ts[0].workers != 0 {
		t.Fatalf("targets %+v: want one final read of a1", ts)
	}
	s.progress.jobs["j"].final = true
	s.progressTargets([]*entry{e}, allocs)
	if len(s.progress.targets) != 0 {
		t.Fatalf("read again after the final read: %+v", s.progress.targets)
	}
}

// Progress is read through the server in one request per read, and a job
// whose reads give nothing is read less and less often until it writes.
func TestProgressReadsBackOffUntilTheTaskWrites(t *testing.T) {
	var mu sync.Mutex
	var reads, others int
	body := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path != "/v1/client/fs/readat/a1" || r.URL.Query().Get("path") != progressPath("work") {
			others++
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		reads++
		if body == "" {
			http.Error(w, "stat alloc/caravan/work.progress.jsonl: no such file or directory", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, body[min(len(body), atoi(r.URL.Query().Get("offset"))):])
		body += fmt.Sprintf("{\"step\": %d, \"loss\": 1}\n", reads+1) // it keeps writing
	}))
	t.Cleanup(srv.Close)
	c, err := api.NewClient(&api.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Token: "t", ProgressInterval: 5 * time.Second}, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1000, 0)
	s.now = func() time.Time { return clock }
	g := gang{Workers: []worker{{Group: "w0", Task: "work"}}, Fraction: 1}
	e := &entry{stub: &jobStub{ID: "j"}, phase: phaseRunning, rec: &record{}, job: &cachedJob{gang: g}}
	allocs := map[string][]*api.AllocationListStub{"j": {{ID: "a1", NodeID: "n1", TaskGroup: "w0", DesiredStatus: "run", ClientStatus: "running"}}}
	s.progressTargets([]*entry{e}, allocs)
	poll := func(until time.Duration) int {
		mu.Lock()
		before := reads
		mu.Unlock()
		for end := clock.Add(until); clock.Before(end); clock = clock.Add(5 * time.Second) {
			s.readProgress(context.Background())
		}
		mu.Lock()
		defer mu.Unlock()
		return reads - before
	}
	if n := poll(65 * time.Second); n != 3 { // at 0, 10 and 30 s
		t.Fatalf("%d reads of a missing file in 65 s, want 3", n)
	}
	mu.Lock()
	body = "{\"step\": 1, \"loss\": 2}\n"
	mu.Unlock()
	if n := poll(10 * time.Second); n != 1 { // at 65 s not yet due, at 70 s due
		t.Fatalf("%d reads when due", n)
	}
	if n := poll(10 * time.Second); n != 2 { // it wrote: every interval again
		t.Fatalf("%d reads after the task wrote, want 2", n)
	}
	if p := s.progress.jobs["j"]; p == nil || len(p.points) != 3 || others != 0 {
		t.Fatalf("progress %+v, %d other requests", p, others)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// With more due files than a poll's share of ProgressReads, a poll reads
// that many, least recently tried first, so every job is read in turn;
// the others wait for a later poll instead of all going to Nomad at once.
func TestProgressReadsStayWithinTheBudget(t *testing.T) {
	var mu sync.Mutex
	read := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		read[strings.TrimPrefix(r.URL.Path, "/v1/client/fs/readat/")]++
		mu.Unlock()
		_, _ = io.WriteString(w, "{\"step\": 1, \"loss\": 1}\n") // every read moves: always due
	}))
	t.Cleanup(srv.Close)
	c, err := api.NewClient(&api.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Token: "t", ProgressInterval: time.Second, ProgressReads: 2}, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1000, 0)
	s.now = func() time.Time { return clock }
	g := gang{Workers: []worker{{Group: "w0", Task: "work"}}, Fraction: 1}
	var es []*entry
	allocs := map[string][]*api.AllocationListStub{}
	for i := range 5 {
		id := fmt.Sprintf("j%d", i)
		es = append(es, &entry{stub: &jobStub{ID: id}, phase: phaseRunning, rec: &record{}, job: &cachedJob{gang: g}})
		allocs[id] = []*api.AllocationListStub{{ID: "a" + id, NodeID: "n1", TaskGroup: "w0", DesiredStatus: "run", ClientStatus: "running"}}
	}
	s.progressTargets(es, allocs)
	total := func() (n int) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range read {
			n += c
		}
		return n
	}
	for poll := 1; poll <= 5; poll++ {
		s.readProgress(context.Background())
		clock = clock.Add(time.Second)
		if n := total(); n != 2*poll {
			t.Fatalf("after poll %d: %d reads, want %d (2 a poll)", poll, n, 2*poll)
		}
		if poll != 3 {
			continue
		}
		mu.Lock()
		for _, e := range es { // least recently tried first: all 5 within 3 polls
			if read["a"+e.stub.ID] == 0 {
				t.Fatalf("after 3 polls of 2 reads, %s was never read: %v", e.stub.ID, read)
			}
		}
		mu.Unlock()
	}
	s.cfg.ProgressReads = -1
	if n := len(s.dueTargets(unix(clock))); n != 5 {
		t.Fatalf("no bound: %d due targets, want all 5", n)
	}
}
