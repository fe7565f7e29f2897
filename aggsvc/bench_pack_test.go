package aggsvc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// packScenario is Gu's packing experiment: jobs that compute for a while,
// then burst their gradients at the aggregator.
type packScenario struct {
	jobs, workers, steps int
	elems, partElems     int
	compute              time.Duration // per step, jittered ±50%
	cores                int           // per pool
}

type packResult struct {
	busyCPU   float64 // pool CPU-seconds actually used
	allocCore float64 // cores reserved × wall seconds
	lat       []time.Duration
}

// BenchmarkPacking runs the same four bursty jobs against one shared pool of
// k cores and against four dedicated pools of k cores (the parameter-server
// way), side by side, and reports CPU-seconds and step latency.
//
//	go test -run '^$' -bench Packing -benchtime 1x ./aggsvc
func BenchmarkPacking(b *testing.B) {
	sc := packScenario{jobs: 4, workers: 2, steps: 40, elems: 1 << 20, partElems: 1 << 18,
		compute: 60 * time.Millisecond, cores: 1}
	for b.Loop() {
		shared := runPacking(b, sc, true)
		dedicated := runPacking(b, sc, false)
		for _, r := range []struct {
			name string
			r    packResult
		}{{"shared", shared}, {"dedicated", dedicated}} {
			b.ReportMetric(r.r.busyCPU, r.name+"_busy_cpu_s")
			b.ReportMetric(r.r.allocCore, r.name+"_alloc_core_s")
			b.ReportMetric(pct(r.r.lat, 50), r.name+"_p50_ms")
			b.ReportMetric(pct(r.r.lat, 99), r.name+"_p99_ms")
		}
		b.ReportMetric(100*(1-shared.allocCore/dedicated.allocCore), "alloc_saving_pct")
		b.ReportMetric(pct(shared.lat, 99)/pct(dedicated.lat, 99), "p99_ratio")
	}
}

func pct(d []time.Duration, p int) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[(len(s)-1)*p/100]) / 1e6
}

func runPacking(b *testing.B, sc packScenario, shared bool) packResult {
	pools := 1
	if !shared {
		pools = sc.jobs
	}
	servers := make([]*Server, pools)
	for i := range servers {
		s, err := NewServer(Config{Key: testKey, Cores: sc.cores, Logger: hclog.NewNullLogger()})
		if err != nil {
			b.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		go s.Serve(ln)
		for s.Addr() == nil {
			time.Sleep(time.Millisecond)
		}
		servers[i] = s
	}
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for j := range sc.jobs {
		addr := servers[j%pools].Addr().String()
		job := fmt.Sprintf("pack-%d", j)
		for r := range sc.workers {
			c := dialWorker(b, []string{addr}, job, r, sc.workers, func(c *ClientConfig) { c.PartitionElems = sc.partElems })
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(j), 7)) // same compute times for a job's workers
				grad := make([]float32, sc.elems)
				for st := range sc.steps {
					time.Sleep(time.Duration(float64(sc.compute) * (0.5 + rng.Float64())))
					t0 := time.Now()
					if err := c.AllReduce(context.Background(), uint64(st), grad, OpMean); err != nil {
						b.Error(err)
						return
					}
					if r == 0 {
						mu.Lock()
						lat = append(lat, time.Since(t0))
						mu.Unlock()
					}
				}
			})
		}
	}
	wg.Wait()
	wall := time.Since(start).Seconds()
	res := packResult{lat: lat, allocCore: wall * float64(sc.cores*pools)}
	for _, s := range servers {
		res.busyCPU += s.poolCPUSeconds()
	}
	return res
}
