package scheduler

import (
	"fmt"
	"sort"
	"testing"
	"time"
)

// BenchmarkAdmission compares the time from registering jobs to their
// tasks running, through the scheduler (queue pool, event, decision, CAS
// rewrite, Nomad placement) and directly into the default pool (Nomad
// placement only; the driver picks the GPU). "single" is one job at a
// time; "burst8" registers 8 quarter-GPU jobs at once (they fit even
// on one node: Nomad itself does not see GPU capacity, so a bigger direct
// burst can land more on a node than its GPUs hold).
//
//	CARAVAN_E2E=1 go test -run '^$' -bench Admission -benchtime 5x ./e2e/scheduler/
func BenchmarkAdmission(b *testing.B) {
	useCluster(b)
	for _, n := range []int{1, 8} {
		for _, via := range []string{"direct", "caravan"} {
			name := fmt.Sprintf("%s/burst%d", via, n)
			if n == 1 {
				name = via + "/single"
			}
			b.Run(name, func(b *testing.B) {
				pool := "default"
				if via == "caravan" {
					startScheduler(b, "-policy", "fifo")
					pool = ""
				}
				benchBurst(b, n, pool)
			})
		}
	}
}

// benchBurst registers n jobs per iteration and reports the mean and
// worst register-to-running latency and the time until all ran.
func benchBurst(b *testing.B, n int, pool string) {
	var lat []float64
	var all float64
	for i := 0; i < b.N; i++ {
		ids := make([]string, n)
		start := time.Now()
		for k := range ids {
			ids[k] = fmt.Sprintf("adm-%d-%d", i, k)
			submit(b, work{ID: ids[k], Fraction: 0.25, Seconds: 0.5, Pool: pool})
		}
		last := 0.0
		for _, id := range ids {
			waitDone(b, id, 1, 120*time.Second)
			started := allocs(b, id)[0].TaskStates["work"].StartedAt
			d := started.Sub(start).Seconds()
			lat = append(lat, d)
			last = max(last, d)
		}
		all += last
		b.StopTimer()
		for _, id := range ids {
			purge(id)
		}
		b.StartTimer()
	}
	sort.Float64s(lat)
	mean := 0.0
	for _, v := range lat {
		mean += v
	}
	mean /= float64(len(lat))
	b.ReportMetric(mean*1000, "ms-to-run/job")
	b.ReportMetric(lat[len(lat)/2]*1000, "p50-ms")
	b.ReportMetric(lat[len(lat)-1]*1000, "max-ms")
	b.ReportMetric(all/float64(b.N)*1000, "ms-all-running")
}
