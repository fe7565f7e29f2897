package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Replay sends reqs open-loop to a front end at url (each at its At offset
// from the start, whatever the answers) and tallies the answers like the
// simulator does; the first warmup requests are sent but not counted.
// Latency is measured at the client.
func Replay(ctx context.Context, url, token, model string, reqs []SimRequest, warmup int) SimResult {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 0}}
	var mu sync.Mutex
	var res SimResult
	var lats []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for i, r := range reqs {
		if d := time.Until(start.Add(r.At)); d > 0 {
			select {
			case <-ctx.Done():
				return res
			case <-time.After(d):
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent := time.Now()
			o := replayOne(ctx, client, url, token, model, r)
			lat := time.Since(sent)
			if i < warmup {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			res.Requests++
			switch o {
			case OutcomeOK:
				res.Met++
				lats = append(lats, lat)
			case OutcomeExceeded:
				res.Late++
			default:
				res.Dropped++
			}
		}()
	}
	wg.Wait()
	counted := reqs[min(warmup, len(reqs)):]
	if res.Requests > 0 {
		res.Attainment = float64(res.Met) / float64(res.Requests)
	}
	if len(counted) > 1 {
		span := (counted[len(counted)-1].At - counted[0].At).Seconds()
		res.Goodput, res.OfferedRate = float64(res.Met)/span, float64(len(counted))/span
	}
	res.P50, res.P99 = pct(lats, 0.5), pct(lats, 0.99)
	return res
}

func replayOne(ctx context.Context, client *http.Client, url, token, model string, r SimRequest) Outcome {
	body, _ := json.Marshal(Request{InputLen: r.In, MaxTokens: r.Out, DeadlineMS: int(r.SLO.Milliseconds())})
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/v1/models/"+model+"/infer", bytes.NewReader(body))
	if err != nil {
		return OutcomeCanceled
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return OutcomeCanceled
	}
	defer resp.Body.Close()
	var out Response
	if json.NewDecoder(resp.Body).Decode(&out) != nil {
		return OutcomeCanceled
	}
	return out.Status
}

// LiveBench replays the trace against a real front end (in this process,
// on loopback) and real Python workers, one policy after another.
type LiveBench struct {
	Bench   BenchConfig
	Model   string
	Workers int
	Script  string
	// Seed gives the front end the measured profile before the run; without
	// it every policy learns its distributions online from the run itself.
	Seed bool
}

// Run starts the workers once and runs each (SLO, speedup, policy).
func (lb LiveBench) Run(ctx context.Context) ([]BenchRow, error) {
	var ws []Worker
	for range lb.Workers {
		pw, err := StartPyWorker(ctx, PyWorkerOptions{Model: lb.Model, Token: "bench-worker", Script: lb.Script, Stderr: os.Stderr})
		if err != nil {
			return nil, err
		}
		defer pw.Kill()
		ws = append(ws, NewHTTPWorker(pw.Addr(), "bench-worker", nil))
	}
	c := lb.Bench
	if c.Skip+c.Requests > len(c.Trace) {
		return nil, fmt.Errorf("bench: trace has %d requests, asked for %d after %d", len(c.Trace), c.Requests, c.Skip)
	}
	tr := c.Trace[c.Skip : c.Skip+c.Requests]
	var rows []BenchRow
	for _, slo := range c.SLOs {
		for _, sp := range c.Speedups {
			reqs := scaleTrace(tr, c, sp, slo)
			for _, pn := range c.Policies {
				r, err := lb.one(ctx, pn, ws, reqs)
				if err != nil {
					return nil, err
				}
				rows = append(rows, BenchRow{SLO: slo, Speedup: sp, SimResult: r})
			}
		}
	}
	return rows, nil
}

func (lb LiveBench) one(ctx context.Context, policy string, ws []Worker, reqs []SimRequest) (SimResult, error) {
	reg := prometheus.NewRegistry()
	f, err := New(Config{Token: "bench", Policy: policy, Registry: reg, Models: map[string]ModelConfig{
		lb.Model: {Features: lb.Bench.Features, Policy: PolicyConfig{MaxBatch: lb.Bench.MaxBatch}, Limits: Limits{MaxInput: 4096, MaxOutput: 1024}}}})
	if err != nil {
		return SimResult{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if lb.Seed {
		if err := f.Seed(lb.Model, lb.Bench.Profile); err != nil {
			return SimResult{}, err
		}
	}
	go f.Run(ctx)
	if err := f.SetWorkers(lb.Model, ws); err != nil {
		return SimResult{}, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return SimResult{}, err
	}
	go func() { _ = f.Serve(ctx, ln) }() // ends with ctx
	r := Replay(ctx, "http://"+ln.Addr().String(), "bench", lb.Model, reqs, len(reqs)/10)
	r.Policy = policy
	var m dto.Metric
	if h, ok := f.m.batchSize.WithLabelValues(lb.Model).(prometheus.Metric); ok && h.Write(&m) == nil && m.GetHistogram().GetSampleCount() > 0 {
		r.Batches = int(m.GetHistogram().GetSampleCount())
		r.MeanBatch = m.GetHistogram().GetSampleSum() / float64(r.Batches)
	}
	return r, nil
}
