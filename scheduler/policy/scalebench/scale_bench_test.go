//go:build unix

package scalebench

import (
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/internal/gcpace"
	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// orderings are every ordering with its default placement.
var orderings = []string{"fifo", "srtf-oracle", "tiresias-las", "tiresias-gittins", "optimus", "fair", "lucid"}

// size is one benchmark scale: the cluster is racks of 40 nodes × 8 GPUs,
// running jobs fill up to 90 % of the GPUs (up to 0.4 per node), and the
// queue holds ten jobs per node, as in registry's BenchmarkDecide.
type size struct {
	name  string
	racks int
}

var sizes = []size{{"1k", 25}, {"10k", 250}}

func (z size) spec() pt.RandomSpec {
	nodes := z.racks * 40
	return pt.RandomSpec{
		Cluster: pt.ClusterSpec{Racks: z.racks, NodesPerRack: 40, GPUsPerNode: 8},
		Running: nodes * 4, Queued: nodes * 10, Busy: 0.9, FracShare: 0.2, ElasticShare: 0.2,
	}
}

// BenchmarkScale decides the steady state of a random snapshot (after
// one cold decision applied, as an executor would) and reports p50-ns and
// p99-ns per decision, cpu-ns/op (process CPU, GC included: meaningful on
// shared cores) and cold-ns, the first decision of a state no policy chose.
func BenchmarkScale(b *testing.B) {
	for _, z := range pick(sizes, "CARAVAN_SCALE_SIZES", func(z size) string { return z.name }) {
		base := pt.Random(42, z.spec())
		for _, name := range pick(orderings, "CARAVAN_SCALE_POLICIES", func(s string) string { return s }) {
			b.Run(z.name+"/"+name, func(b *testing.B) { benchDecide(b, base, name) })
		}
	}
}

func benchDecide(b *testing.B, base *policy.Snapshot, name string) {
	p, err := registry.New(name, registry.Config{GittinsPrior: []float64{100, 900, 3000, 20000, 80000}})
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	first := p.Decide(pt.Clone(base))
	cold := time.Since(t0)
	s := pt.Apply(base, first)
	lat := make([]time.Duration, 0, b.N)
	stop := steadyProfile(b, name)
	defer stop()
	gc := pacer()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		gc.Idle()
		t0 := time.Now()
		d := p.Decide(s)
		lat = append(lat, time.Since(t0))
		if len(d.Waiting) == 0 {
			b.Fatal("a queue of ten jobs per node cannot all start")
		}
	}
	b.StopTimer()
	stop()
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(quantile(lat, 50).Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(quantile(lat, 99).Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(cold.Nanoseconds()), "cold-ns")
}

// profiled counts steadyProfile's runs by name.
var profiled = map[string]int{}

// steadyProfile starts a CPU profile of the steady-state decisions
// alone (the cold decision and the snapshot generation, seconds at 10k,
// would otherwise dominate -cpuprofile) when CARAVAN_SCALE_CPUPROFILE
// names a file prefix: it writes <prefix>-<ordering>.prof, and for the
// k-th run of the same benchmark (-test.count, or the testing package's
// first 1-iteration run) <prefix>-<ordering>.<k>.prof, so that the few
// decisions of several runs can be merged (go tool pprof -proto). The
// returned stop may be called more than once.
func steadyProfile(b *testing.B, name string) func() {
	prefix := os.Getenv("CARAVAN_SCALE_CPUPROFILE")
	if prefix == "" {
		return func() {}
	}
	file := prefix + "-" + name
	if profiled[name]++; profiled[name] > 1 {
		file += "." + strconv.Itoa(profiled[name])
	}
	f, err := os.Create(file + ".prof")
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		b.Fatal(err)
	}
	done := false
	return func() {
		if !done {
			done = true
			pprof.StopCPUProfile()
			_ = f.Close()
		}
	}
}

// pick keeps the items whose key the environment variable lists (all when
// it is unset).
func pick[T any](all []T, env string, key func(T) string) []T {
	v := os.Getenv(env)
	if v == "" {
		return all
	}
	want := map[string]bool{}
	for _, s := range strings.Split(v, ",") {
		want[strings.TrimSpace(s)] = true
	}
	var out []T
	for _, t := range all {
		if want[key(t)] {
			out = append(out, t)
		}
	}
	return out
}

// quantile is the q-th percentile (nearest rank) of lat.
func quantile(lat []time.Duration, q int) time.Duration {
	s := append([]time.Duration(nil), lat...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	i := (len(s)*q + 99) / 100
	if i > 0 {
		i--
	}
	return s[i]
}

// cpuTime is the CPU time this process has used.
// pacer is the live scheduler's collector pacing between rounds
// (gcpace): CARAVAN_SCALE_GC=runtime leaves every collection to the
// runtime, so cycles land inside decisions.
func pacer() *gcpace.Pacer {
	return gcpace.New(gcpace.Config{Off: os.Getenv("CARAVAN_SCALE_GC") == "runtime"})
}

func cpuTime() time.Duration {
	c, _ := usage()
	return c
}

// usage is the process's CPU time and minor page faults so far: a
// decision whose allocations land on fresh heap pages (an 80,001-slot
// placement is 3.2 MB) pays ~800 faults, ~0.5-1 ms.
func usage() (time.Duration, int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Minflt
}
