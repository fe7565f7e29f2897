package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// benchQueue is n queued requests with the conversation trace's length mix
// (as scaled by caravan serve bench) and deadlines spread over 400 ms, and
// distributions warmed like the benchmark's.
func benchQueue(b *testing.B, n int) ([]Item, *Dists) {
	rng := rand.New(rand.NewPCG(3, 4))
	d := NewDists(0)
	for bs := 1; bs <= 16; bs *= 2 {
		for in := 1; in <= 2048; in *= 2 {
			for out := 1; out <= 512; out *= 2 {
				for range 8 {
					ms := float64(bs) * (0.05*float64(in) + 0.3*float64(out)) * (0.8 + 0.4*rng.Float64()) / 4
					d.Observe(KeyFor(bs, in, out), time.Duration(ms*float64(time.Millisecond)))
				}
			}
		}
	}
	q := make([]Item, n)
	for i := range q {
		q[i] = Item{Seq: uint64(i), Arrival: t0, Deadline: t0.Add(time.Duration(rng.IntN(400)) * time.Millisecond),
			In: 1 + rng.IntN(1024), Out: 1 + rng.IntN(256)}
	}
	return q, d
}

// BenchmarkDecide is the policy's decision time per batch.
// go test ./serve -run X -bench Decide -cpu 1
func BenchmarkDecide(b *testing.B) {
	for _, pol := range PolicyNames {
		for _, n := range []int{16, 64, 256} {
			b.Run(fmt.Sprintf("%s/queue=%d", pol, n), func(b *testing.B) {
				p, _ := NewPolicy(pol, PolicyConfig{MaxBatch: 16})
				q, d := benchQueue(b, n)
				b.ResetTimer()
				for range b.N {
					p.Decide(t0, q, d, true)
				}
			})
		}
	}
}

type instantWorker struct{}

func (instantWorker) Addr() string { return "instant" }
func (instantWorker) Run(_ context.Context, _ string, items []WorkItem) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(items))
	for i := range out {
		out[i] = json.RawMessage(`1`)
	}
	return out, nil
}

// BenchmarkAdmit is requests per second through the whole front end (HTTP
// decode, auth, queue, Orloj, dispatch, answer) with a worker that answers
// at once, so only the front end's cost remains.
// go test ./serve -run X -bench Admit -cpu 1
func BenchmarkAdmit(b *testing.B) {
	f, err := New(Config{Token: testToken, Models: map[string]ModelConfig{"m": {SLO: 10 * time.Second, Features: true}}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	f.SetWorkers("m", []Worker{instantWorker{}, instantWorker2{}})
	h := f.Handler()
	body := `{"input_len":100,"max_tokens":20}`
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", "/v1/models/m/infer", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+testToken)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

type instantWorker2 struct{ instantWorker }

func (instantWorker2) Addr() string { return "instant-2" }
