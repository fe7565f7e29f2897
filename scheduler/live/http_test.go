package live

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

func testScheduler(t *testing.T) *Scheduler {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Token, cfg.Policy = "secret", "tiresias-las"
	s, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAPIRequiresTheBearerToken(t *testing.T) {
	h := testScheduler(t).Handler()
	for _, auth := range []string{"", "Bearer wrong", "secret", "Basic secret"} {
		for _, path := range []string{"/v1/queue", "/metrics"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusUnauthorized {
				t.Errorf("%s with %q: %d, want 401", path, auth, rec.Code)
			}
		}
	}
}

// Profiles are served only when asked for (-pprof), and then behind the
// token like every other endpoint.
func TestPprofIsOptInAndAuthenticated(t *testing.T) {
	get := func(h http.Handler, auth string) int {
		req := httptest.NewRequest(http.MethodGet, "/debug/pprof/heap?debug=1", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	s := testScheduler(t)
	if c := get(s.Handler(), "Bearer secret"); c != http.StatusNotFound {
		t.Fatalf("without -pprof: %d, want 404", c)
	}
	s.cfg.Pprof = true
	h := s.Handler()
	if c := get(h, "Bearer wrong"); c != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d, want 401", c)
	}
	if c := get(h, "Bearer secret"); c != http.StatusOK {
		t.Fatalf("with -pprof and the token: %d, want 200", c)
	}
}

func TestQueueAndMetricsServeTheLatestRound(t *testing.T) {
	s := testScheduler(t)
	now := time.Unix(1000, 0)
	es := []*entry{
		{stub: &jobStub{ID: "q"}, rec: &record{Attained: 3, QueuedSince: 990}, phase: phaseQueued, job: &cachedJob{gang: gang{Workers: []worker{{}}, Fraction: 1}}},
		{stub: &jobStub{ID: "r", Meta: map[string]string{MetaPlacement: "w=n/0/G/1/0"}}, rec: &record{Attained: 9}, phase: phaseRunning},
	}
	s.view.Store(buildView("tiresias-las+consolidated", es, []policy.Rank{{JobID: "q"}, {JobID: "r", Queue: 1}}, map[string]string{"q": "no room"}, now))
	h := s.Handler()
	get := func(path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer secret")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	rec := get("/v1/queue")
	var v QueueView
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil || rec.Code != 200 {
		t.Fatalf("queue: %d %s %v", rec.Code, rec.Body, err)
	}
	if len(v.Jobs) != 2 || v.Jobs[0].ID != "r" || v.Jobs[1].Reason != "no room" || v.Jobs[1].WaitSeconds != 10 {
		t.Fatalf("queue view %+v", v.Jobs)
	}
	var out strings.Builder
	PrintQueue(&out, &v)
	if !strings.Contains(out.String(), "no room") || !strings.Contains(out.String(), "w=n/0/G/1/0") {
		t.Fatalf("table:\n%s", out.String())
	}
	if rec := get("/v1/queue?x=1"); rec.Code != http.StatusBadRequest {
		t.Errorf("query parameters: %d, want 400", rec.Code)
	}
	m := get("/metrics").Body.String()
	for _, want := range []string{"caravan_scheduler_queued_jobs 1", "caravan_scheduler_running_jobs 1", "caravan_scheduler_cas_conflicts_total 0"} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
}
