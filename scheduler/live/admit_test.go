package live

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// A round's admissions are written concurrently, each one register call
// with check-and-set on its own job, and the round sees every write's
// index afterwards.
func TestAdmissionsAreWrittenConcurrently(t *testing.T) {
	var registers atomic.Int64
	var p peak
	s := schedulerOn(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.URL.Path != "/v1/jobs" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		p.enter()
		defer p.leave()
		time.Sleep(20 * time.Millisecond)
		idx := 100 + registers.Add(1)
		_, _ = fmt.Fprintf(w, `{"JobModifyIndex": %d}`, idx)
	})
	nodes := testNodes()
	var ads []*admission
	for i := 0; i < 3*admitParallel; i++ {
		id := fmt.Sprintf("j%d", i)
		job := testJob(id, map[string]any{"command": "x", "gpus": 1})
		g, err := parseGang(job)
		if err != nil {
			t.Fatal(err)
		}
		e := &entry{stub: &jobStub{ID: id, JobModifyIndex: 7}, rec: &record{}, job: &cachedJob{index: 7, job: job, gang: g}}
		ts := []target{{Worker: g.Workers[0], NodeID: "n1", GPU: 0, UUID: "GPU-a", Fraction: 1}}
		ads = append(ads, &admission{e: e, ts: ts})
	}
	s.writeAdmissions(ads, nodes, time.Now())
	for _, ad := range ads {
		if why := s.admitted(ad, time.Now()); why != "" {
			t.Fatalf("%s: %s", ad.e.stub.ID, why)
		}
	}
	n := int64(len(ads))
	if registers.Load() != n || s.calls.Load() != n || s.wrote != uint64(100+n) {
		t.Fatalf("%d registers, %d calls counted, wrote %d; want %d, %d, %d", registers.Load(), s.calls.Load(), s.wrote, n, n, 100+n)
	}
	if m := p.most.Load(); m < 2 || m > admitParallel {
		t.Fatalf("%d writes at once, want 2..%d", m, admitParallel)
	}
	if got := count(s.metrics.admissions); got != float64(n) {
		t.Fatalf("admissions_total %v", got)
	}
}
