package sim

import (
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

// BenchmarkPhillyEngine replays the whole 82k-job Philly trace on 512 GPUs
// with a trivial strict-FIFO policy: it measures the engine's own cost per
// replay (policy cost excluded). go test -bench PhillyEngine -benchtime 1x
func BenchmarkPhillyEngine(b *testing.B) {
	tr, err := trace.LoadPhilly(repo.MustTraces(b, "philly", "philly_jobs.csv"), trace.PhillyOptions{})
	if n := benchJobs; n > 0 && err == nil {
		tr.Jobs = tr.Jobs[:n]
	}
	if err != nil {
		b.Fatal(err)
	}
	prof, err := loadProfiles(repo.MustTraces(b, "model-profiles"))
	if err != nil {
		b.Fatal(err)
	}
	jobs, err := Build(tr.Jobs, WorkloadOptions{Profiles: prof})
	if err != nil {
		b.Fatal(err)
	}
	c, _ := WithGPUs(512, 8, 32)
	b.ResetTimer()
	for range b.N {
		r, err := Run(Config{}, c, jobs, &testFIFO{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(r.Metrics.Decisions), "decisions")
	}
}

// benchJobs truncates the trace for profiling (0 = all jobs).
var benchJobs = 0
