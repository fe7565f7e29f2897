package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testToken = "s3cret"

// fakeWorker speaks the worker protocol in Go: each batch takes delay; when
// kill is set, it drops the connection mid-batch instead of answering.
type fakeWorker struct {
	srv     *httptest.Server
	delay   time.Duration
	hold    chan struct{} // when set, each batch waits for it to close
	kill    atomic.Bool
	batches atomic.Int32
}

func newFakeWorker(t *testing.T, delay time.Duration) *fakeWorker {
	fw := &fakeWorker{delay: delay}
	fw.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer wtok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var br batchRequest
		if err := json.NewDecoder(r.Body).Decode(&br); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		fw.batches.Add(1)
		time.Sleep(fw.delay)
		if fw.hold != nil {
			<-fw.hold
		}
		if fw.kill.Load() {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		out := make([]json.RawMessage, len(br.Items))
		for i, it := range br.Items {
			out[i] = json.RawMessage(fmt.Sprintf(`{"echo":%q}`, it.ID))
		}
		json.NewEncoder(w).Encode(batchResponse{Outputs: out})
	}))
	t.Cleanup(fw.srv.Close)
	return fw
}

func (fw *fakeWorker) worker() Worker {
	return NewHTTPWorker(strings.TrimPrefix(fw.srv.URL, "http://"), "wtok", nil)
}

type testFE struct {
	f   *Frontend
	srv *httptest.Server
}

func startFE(t *testing.T, policy string, slo time.Duration, workers ...*fakeWorker) *testFE {
	t.Helper()
	f, err := New(Config{Token: testToken, Policy: policy, MaxBodyBytes: 4096,
		Models: map[string]ModelConfig{"m": {SLO: slo, Features: true, Limits: Limits{MaxInput: 64, MaxOutput: 64}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go f.Run(ctx)
	var ws []Worker
	for _, w := range workers {
		ws = append(ws, w.worker())
	}
	f.SetWorkers("m", ws)
	srv := httptest.NewServer(f.Handler())
	t.Cleanup(srv.Close)
	return &testFE{f: f, srv: srv}
}

func (fe *testFE) post(t *testing.T, token, body string) (int, Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", fe.srv.URL+"/v1/models/m/infer", strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	var r Response
	json.Unmarshal(buf.Bytes(), &r)
	return resp.StatusCode, r, buf.String()
}

func (fe *testFE) count(o Outcome) float64 {
	return counterValue(fe.f.m.requests.WithLabelValues("m", string(o)))
}

func TestServesWithinDeadline(t *testing.T) {
	fe := startFE(t, "orloj", 5*time.Second, newFakeWorker(t, 5*time.Millisecond))
	code, r, raw := fe.post(t, testToken, `{"id":"a","input_len":3,"max_tokens":2}`)
	if code != 200 || r.Status != OutcomeOK || !strings.Contains(string(r.Output), `"a"`) {
		t.Fatalf("got %d %s", code, raw)
	}
	if fe.count(OutcomeOK) != 1 {
		t.Errorf("ok counter %v, want 1", fe.count(OutcomeOK))
	}
}

// FIFO never drops early, so the batch runs; the worker holds it past the
// 30 ms deadline. The client is answered at the deadline while the batch is
// still running, and the result that comes later is not counted as met.
func TestLateServiceNeverCountsAsMet(t *testing.T) {
	w := newFakeWorker(t, 0)
	w.hold = make(chan struct{})
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(w.hold) }) }) // before the server closes
	fe := startFE(t, "fifo", 30*time.Millisecond, w)
	code, r, raw := fe.post(t, testToken, `{"input_len":1}`)
	if code != http.StatusGatewayTimeout || r.Status != OutcomeExceeded {
		t.Fatalf("got %d %s, want 504 deadline_exceeded", code, raw)
	}
	if w.batches.Load() != 1 || histCount(fe, "m") != 0 {
		t.Fatalf("batches sent %d, finished %d: want the answer while the batch runs", w.batches.Load(), histCount(fe, "m"))
	}
	release.Do(func() { close(w.hold) }) // the late result arrives now
	waitFor(t, func() bool { return histCount(fe, "m") == 1 })
	if fe.count(OutcomeOK) != 0 || fe.count(OutcomeExceeded) != 1 {
		t.Errorf("ok=%v exceeded=%v, want 0 and 1", fe.count(OutcomeOK), fe.count(OutcomeExceeded))
	}
}

// The dispatcher's own path: a result delivered past the deadline is
// recorded as exceeded even if nobody else answered first.
func TestAnswerAfterDeadlineIsExceeded(t *testing.T) {
	fe := startFE(t, "fifo", time.Second)
	p := newPending(1, time.Now().Add(-time.Second), 10*time.Millisecond, Request{})
	fe.f.m.answer("m", p, OutcomeOK, "", json.RawMessage(`1`), "w", 1)
	if r := <-p.done; r.Status != OutcomeExceeded || r.Output != nil {
		t.Errorf("late OK delivered as %+v", r)
	}
	if fe.count(OutcomeOK) != 0 {
		t.Error("a late answer counted as met")
	}
}

func TestRejectsBadRequestsWithoutDisturbingOthers(t *testing.T) {
	fe := startFE(t, "orloj", 5*time.Second, newFakeWorker(t, 50*time.Millisecond))
	var wg sync.WaitGroup
	good := make(chan int, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, _ := fe.post(t, testToken, `{"input_len":2,"max_tokens":2}`)
			good <- code
		}()
	}
	bad := []struct {
		token, body string
		code        int
		says        string
	}{
		{"", `{"input_len":1}`, 401, "bearer token"},
		{"wrong", `{"input_len":1}`, 401, "bearer token"},
		{testToken, `{"input_len":`, 400, "malformed JSON"},
		{testToken, `{"max_tokens":65}`, 400, "field max_tokens"},
		{testToken, `{"tokens":[` + strings.Repeat("1,", 3000) + `1]}`, 413, "exceeds 4096 bytes"},
	}
	for _, b := range bad {
		code, _, raw := fe.post(t, b.token, b.body)
		if code != b.code || !strings.Contains(raw, b.says) {
			t.Errorf("%.30q: got %d %s, want %d mentioning %q", b.body, code, raw, b.code, b.says)
		}
	}
	wg.Wait()
	close(good)
	for c := range good {
		if c != 200 {
			t.Errorf("a good request beside the bad ones got %d", c)
		}
	}
	// Unauthenticated metrics are refused too.
	resp, _ := http.Get(fe.srv.URL + "/metrics")
	if resp.StatusCode != 401 {
		t.Errorf("metrics without token: %d", resp.StatusCode)
	}
	resp.Body.Close()
}

// A worker dies mid-batch: with a second worker the requests are retried
// there within their deadlines; with none left they fail fast, long before
// their deadline, with a clear status.
func TestWorkerKilledMidBatch(t *testing.T) {
	dying, healthy := newFakeWorker(t, 20*time.Millisecond), newFakeWorker(t, 20*time.Millisecond)
	// The idle worker with the smallest address gets the first batch.
	if dying.worker().Addr() > healthy.worker().Addr() {
		dying, healthy = healthy, dying
	}
	dying.kill.Store(true)
	fe := startFE(t, "orloj", 3*time.Second, dying, healthy)
	code, r, raw := fe.post(t, testToken, `{"input_len":1}`)
	if code != 200 || r.Status != OutcomeOK || r.Worker != healthy.worker().Addr() {
		t.Fatalf("got %d %s, want ok from the healthy worker", code, raw)
	}
	if dying.batches.Load() == 0 {
		t.Fatal("the dying worker never got the batch; the test proved nothing")
	}

	alone := newFakeWorker(t, 20*time.Millisecond)
	alone.kill.Store(true)
	// A 30 s deadline: worker_failed (not deadline_exceeded) shows it was
	// answered as soon as the worker failed, not when the deadline passed.
	fe2 := startFE(t, "orloj", 30*time.Second, alone)
	code, r, raw = fe2.post(t, testToken, `{"input_len":1}`)
	if code != 503 || r.Status != OutcomeWorkerFailed {
		t.Fatalf("got %d %s, want a fast 503 worker_failed", code, raw)
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Models: map[string]ModelConfig{"m": {}}}, "token"},
		{Config{Token: "x"}, "models"},
		{Config{Token: "x", TLSCertFile: "a", Models: map[string]ModelConfig{"m": {}}}, "tls_key"},
		{Config{Token: "x", Policy: "nexus", Models: map[string]ModelConfig{"m": {}}}, "nexus"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("config %+v: error %v, want one naming %q", c.cfg, err, c.want)
		}
	}
}

func histCount(fe *testFE, model string) uint64 {
	return histogramCount(fe.f.m.batchTime.WithLabelValues(model))
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
