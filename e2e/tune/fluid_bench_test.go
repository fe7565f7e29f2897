package tune

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
	"github.com/caravan-dl/caravan/tune"
)

// fluidModes are the two live setups compared: the fluid policy, trials
// asking 0.25 of a GPU (the policy re-plans it from the digits profile),
// and the one-trial-per-whole-GPU FIFO baseline (Ray Tune's default: each
// trial asks for a whole GPU).
var fluidModes = []struct{ name, policy, fraction string }{
	{"fluid", "fluid", "0.25"},
	{"whole", "fifo", "1"},
}

// BenchmarkTuneFluidLive runs the shipped digits search
// (jobspecs/tune-digits.tune.hcl: SHA 9 → 3 → 1 over 40/120/360 steps,
// real PyTorch on CPU) through `caravan scheduler` on one Nomad agent with
// ONE simulated GPU under -policy fluid and under FIFO with whole-GPU
// trials, each twice per iteration (ABBA), and reports each one's mean
// wall time to the best trial (the search's end: SHA knows its best only
// then), the best loss, and whether both found the same configuration. The simulated GPU does no
// work: a trial runs on the node's CPU (2 cores here), so what packing
// gains live is CPU concurrency, not GPU sharing; fluid packs because the
// digits profile (scheduler/policy/fluid/profiles) says a trial keeps one
// core of two busy.
func BenchmarkTuneFluidLive(b *testing.B) {
	c := startTuneCluster(b, "", 1)
	src, err := os.ReadFile(filepath.Join(repo, "jobspecs", "tune-digits.tune.hcl"))
	if err != nil {
		b.Fatal(err)
	}
	wall, loss, conc := map[string]float64{}, map[string]float64{}, map[string]float64{}
	same := 0
	for i := 0; i < b.N; i++ {
		// ABBA, then BAAB: a load that drifts linearly over the
		// iteration weighs on both modes alike, and neither always runs
		// first on a just-started cluster.
		order := []int{0, 1, 1, 0}
		if i%2 == 1 {
			order = []int{1, 0, 0, 1}
		}
		best := map[string]tune.Trial{}
		for r, k := range order {
			m := fluidModes[k]
			name := fmt.Sprintf("bench-%s-%d-%d", m.name, i, r)
			load := loadAvg()
			st := runSearch(b, c, m.policy, m.fraction, name, strings.Replace(string(src), `tune "digits"`, fmt.Sprintf("tune %q", name), 1))
			tr, ok := st.Tuner.Best()
			if !ok || tr.Status != tune.Done {
				b.Fatalf("%s: no best trial: %+v", name, tr)
			}
			best[m.name] = tr
			wall[m.name] += st.Ended.Sub(st.Started).Seconds()
			loss[m.name] += tr.Last()
			at, each := trialsAtOnce(b, c, st)
			conc[m.name] += at
			b.Logf("%s: %.1f s to the best, trial %d %v %s = %.5f; %.2f trials at once, %.1f s per trial task (load average %s before, %s after)",
				name, st.Ended.Sub(st.Started).Seconds(), tr.ID, tr.Config, st.Tuner.Spec.Metric, tr.Last(), at, each, load, loadAvg())
		}
		if fmt.Sprint(best["fluid"].Config) == fmt.Sprint(best["whole"].Config) {
			same++
		}
	}
	runs := float64(2 * b.N) // each mode runs twice per iteration
	for m := range wall {
		b.ReportMetric(wall[m]/runs, m+"-s")
		b.ReportMetric(loss[m]/runs, m+"-loss")
		b.ReportMetric(conc[m]/runs, m+"-trials-at-once")
	}
	b.ReportMetric(wall["whole"]/wall["fluid"], "speedup")
	b.ReportMetric(float64(same)/float64(b.N), "same-best")
}

// runSearch runs the spec to its end under a fresh `caravan scheduler
// -policy pol`, with the trial template asking for fraction of a GPU, and
// returns the search's saved state.
func runSearch(b *testing.B, c *harness.Cluster, pol, fraction, name, spec string) *tune.State {
	b.Helper()
	defer startScheduler(b, c, pol, "caravan/bench/"+name)()
	if _, err := c.RunFile(filepath.Join(repo, "jobspecs", "tune-digits.nomad.hcl"),
		map[string]string{"workloads": harness.TaskWorkloads, "gpu_fraction": fraction}); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), name+".hcl")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		b.Fatal(err)
	}
	startTuner(b, c, path).finish(b, name, 10*time.Minute)
	st, err := tune.LoadState(context.Background(), &tune.NomadCluster{API: c.API}, name)
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// trialsAtOnce is the search's trial tasks' summed run time (Nomad's
// task start to finish) over its wall time: how many trials ran at once
// on average, which packing raises; and their mean run time.
func trialsAtOnce(b *testing.B, c *harness.Cluster, st *tune.State) (atOnce, each float64) {
	b.Helper()
	jobs, _, err := c.API.Jobs().PrefixList("tune-digits" + tune.TrialInfix)
	if err != nil {
		b.Fatal(err)
	}
	busy, n := 0.0, 0
	for _, j := range jobs {
		allocs, _, err := c.API.Jobs().Allocations(j.ID, true, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, a := range allocs {
			ts := a.TaskStates["trial"]
			if ts == nil || ts.StartedAt.Before(st.Started) || ts.FinishedAt.After(st.Ended) || ts.FinishedAt.Before(ts.StartedAt) {
				continue // another search's, or not run
			}
			busy += ts.FinishedAt.Sub(ts.StartedAt).Seconds()
			n++
		}
	}
	return busy / st.Ended.Sub(st.Started).Seconds(), busy / float64(max(n, 1))
}

// loadAvg is the machine's 1-minute load average, for the log: the
// trials share the CPU with whatever else runs.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}
