package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func startRealWorker(t *testing.T, model string) *PyWorker {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import torch").Run(); err != nil {
		t.Skip("no /usr/bin/python3 with torch (Debian python3-torch; scripts/install-deps.sh installs it)")
	}
	wd, _ := os.Getwd()
	script, err := WorkerScript(wd)
	if err != nil {
		t.Fatal(err)
	}
	w, err := StartPyWorker(context.Background(), PyWorkerOptions{Model: model, Token: "wtok", Script: script, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Kill)
	return w
}

// One real PyTorch worker behind the front end on loopback: requests are
// served with the tokens asked for, the worker refuses a wrong token and
// names the bad field, and after it is killed requests fail fast.
func TestRealPythonWorker(t *testing.T) {
	pw := startRealWorker(t, "lstm-gen")
	f, err := New(Config{Token: testToken, Models: map[string]ModelConfig{"lstm-gen": {SLO: 20 * time.Second, Features: true}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	f.SetWorkers("lstm-gen", []Worker{NewHTTPWorker(pw.Addr(), "wtok", nil)})
	srv := httptest.NewServer(f.Handler())
	defer srv.Close()
	fe := &testFE{f: f, srv: srv}
	post := func(body string) (int, Response) {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/models/lstm-gen/infer", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r Response
		json.NewDecoder(resp.Body).Decode(&r)
		return resp.StatusCode, r
	}
	results := make(chan Response, 6)
	for i := 0; i < 6; i++ {
		go func() {
			_, r := post(fmt.Sprintf(`{"tokens":[1,2,3,%d],"max_tokens":%d}`, i, 3+i))
			results <- r
		}()
	}
	for i := 0; i < 6; i++ {
		r := <-results
		var out struct{ Tokens []int }
		if r.Status != OutcomeOK || json.Unmarshal(r.Output, &out) != nil || len(out.Tokens) < 3 {
			t.Fatalf("request %d: %+v", i, r)
		}
	}
	if n := histogramCount(fe.f.m.batchSize.WithLabelValues("lstm-gen")); n == 0 {
		t.Error("no batch recorded")
	}

	// The worker's own endpoint authenticates and validates.
	bad := NewHTTPWorker(pw.Addr(), "wrong", nil)
	if _, err := bad.Run(ctx, "lstm-gen", []WorkItem{{ID: "x", InputLen: 1}}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong token: %v", err)
	}
	good := NewHTTPWorker(pw.Addr(), "wtok", nil)
	if _, err := good.Run(ctx, "lstm-gen", []WorkItem{{ID: "x", InputLen: 1, MaxTokens: 99999}}); err == nil || !strings.Contains(err.Error(), "max_tokens") {
		t.Errorf("oversized max_tokens: %v", err)
	}

	// Killed: the next request fails fast with a clear status (with its
	// 20 s deadline, deadline_exceeded would mean it waited).
	pw.Kill()
	code, r := post(`{"input_len":4,"max_tokens":4}`)
	if code != 503 || r.Status != OutcomeWorkerFailed {
		t.Errorf("after kill: %d %+v", code, r)
	}
}
