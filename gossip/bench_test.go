package gossip

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
	dto "github.com/prometheus/client_model/go"
)

// BenchmarkConvergence measures, on loopback with the default member
// configuration (memberlist's LAN timers: gossip every 200 ms to 3
// members), the time from one member's change to every other member
// having merged it (p50/p99/max over members × changes), and in steady
// state, with every member changing its resources every 5 s, the bytes
// each member sends per second: our payload (broadcasts + push-pull) and
// everything on the wire (memberlist's pings, acks and framing, after
// encryption). Not a test: it starts hundreds of members. Sizes and the
// steady-state window come from the environment:
//
//	CARAVAN_GOSSIP_BENCH_MEMBERS=50,100,200 CARAVAN_GOSSIP_BENCH_STEADY=30s \
//	  go test ./gossip -run '^$' -bench Convergence -benchtime 10x
func BenchmarkConvergence(b *testing.B) {
	for _, n := range benchSizes(b) {
		var cl *benchCluster
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			if cl == nil { // the framework calls this more than once: reuse
				cl = startBenchCluster(b, n)
			}
			cl.run(b)
		})
		if cl != nil {
			cl.shutdown()
		}
	}
}

func benchSizes(b *testing.B) []int {
	s := os.Getenv("CARAVAN_GOSSIP_BENCH_MEMBERS")
	if s == "" {
		s = "50"
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			b.Fatalf("CARAVAN_GOSSIP_BENCH_MEMBERS: %q is not a list of member counts ≥ 2", s)
		}
		out = append(out, n)
	}
	return out
}

func benchSteady(b *testing.B) time.Duration {
	s := os.Getenv("CARAVAN_GOSSIP_BENCH_STEADY")
	if s == "" {
		return 30 * time.Second
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 5*time.Second {
		b.Fatalf("CARAVAN_GOSSIP_BENCH_STEADY: %q, want a duration ≥ 5s", s)
	}
	return d
}

// benchLogger: CARAVAN_GOSSIP_BENCH_LOG=path keeps info and warnings (memberlist's
// included: suspicions, full handler queues) to diagnose a slow run.
var benchLogger = func() hclog.Logger {
	path := os.Getenv("CARAVAN_GOSSIP_BENCH_LOG")
	if path == "" {
		return hclog.NewNullLogger()
	}
	f, err := os.Create(path)
	if err != nil {
		return hclog.NewNullLogger()
	}
	return hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: f})
}()

type benchCluster struct {
	ms   []*Member
	wire wireCounter

	mu     sync.Mutex
	target uint64
	seen   map[string]time.Time

	steadyDone                    bool
	payloadRate, wireRate, cpuPct float64
}

func startBenchCluster(b *testing.B, n int) *benchCluster {
	cl := &benchCluster{seen: map[string]time.Time{}}
	t0 := time.Now()
	for i := range n {
		m, err := cl.startMember(i)
		if err != nil {
			cl.shutdown()
			b.Fatal(err)
		}
		cl.ms = append(cl.ms, m)
	}
	b.Logf("%d members started and joined in %v", n, time.Since(t0).Round(time.Millisecond))
	t1 := time.Now()
	deadline := time.Now().Add(3 * time.Minute)
	for lastLog := t1; !cl.fullMembership(); {
		if time.Since(lastLog) > 10*time.Second {
			lastLog = time.Now()
			lo, hi := cl.memberRange()
			b.Logf("%v: members known per member %d..%d; laggards resync with the seed", time.Since(t1).Round(time.Second), lo, hi)
			cl.resyncLaggards()
		}
		if time.Now().After(deadline) {
			cl.shutdown()
			b.Fatalf("%d members: no full membership after 3 minutes", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Logf("full membership in %v more", time.Since(t1).Round(time.Millisecond))
	return cl
}

func (cl *benchCluster) startMember(i int) (*Member, error) {
	c := DefaultConfig(fmt.Sprintf("m%04d", i))
	c.BindAddr, c.BindPort, c.Keys = "127.0.0.1", 0, [][]byte{testKey}
	c.Probe.Disabled = true
	c.CoordInterval = time.Hour // only resource changes, as measured
	c.Logger = benchLogger
	var terr error
	c.Tune = func(mc *memberlist.Config) {
		t, err := newCountingTransport(c.BindAddr, &cl.wire)
		if err != nil {
			terr = err
			return
		}
		mc.Transport = t
		if os.Getenv("CARAVAN_GOSSIP_BENCH_COMPRESS") == "0" {
			mc.EnableCompression = false
		}
		mc.BindPort, mc.AdvertisePort = t.GetAutoBindPort(), t.GetAutoBindPort()
	}
	if i > 0 { // as deployed: everyone joins the seed (static list or Consul), plus one more
		c.Join = []string{cl.ms[0].Addr(), cl.ms[rand.IntN(i)].Addr()}
	}
	m, err := New(c)
	if terr != nil {
		return nil, terr
	}
	if err != nil {
		return nil, err
	}
	name := c.Name
	m.onChange = func(node string) {
		if node != "m0000" || name == "m0000" {
			return
		}
		r, _ := m.store.get(node)
		cl.mu.Lock()
		if r.Sections[SectionResources].Version >= cl.target && cl.seen[name].IsZero() {
			cl.seen[name] = time.Now()
		}
		cl.mu.Unlock()
	}
	return m, nil
}

func (cl *benchCluster) fullMembership() bool {
	for _, m := range cl.ms {
		if m.numMembers() != len(cl.ms) {
			return false
		}
	}
	return true
}

// resyncLaggards: a member that missed another's alive message would
// wait for its next push-pull (a minute or two at this size); membership
// is memberlist's business, not what is measured, so push-pull with the
// seed, which every member joined.
func (cl *benchCluster) resyncLaggards() {
	for _, m := range cl.ms[1:] {
		if m.numMembers() < len(cl.ms) {
			_, _ = m.Join([]string{cl.ms[0].Addr()})
		}
	}
}

func (cl *benchCluster) memberRange() (lo, hi int) {
	lo = len(cl.ms)
	for _, m := range cl.ms {
		lo, hi = min(lo, m.numMembers()), max(hi, m.numMembers())
	}
	return lo, hi
}

func (cl *benchCluster) shutdown() {
	var wg sync.WaitGroup
	for _, m := range cl.ms {
		wg.Add(1)
		go func() { defer wg.Done(); _ = m.Shutdown() }()
	}
	wg.Wait()
}

// run makes b.N changes at the first member, one at a time, and records
// when each other member merged each.
func (cl *benchCluster) run(b *testing.B) {
	n := len(cl.ms)
	var lat []float64
	b.ResetTimer()
	for i := range b.N {
		cl.mu.Lock()
		clear(cl.seen)
		cl.target = cl.ms[0].lastVer + 1
		cl.mu.Unlock()
		start := time.Now()
		_ = cl.ms[0].SetResources(Resources{MemTotalBytes: 1 << 40, MemUsedBytes: uint64(time.Now().UnixNano())})
		deadline := start.Add(5 * time.Minute)
		for cl.seenBy() < n-1 {
			if time.Now().After(deadline) {
				b.Fatalf("change %d: %d of %d members saw it within 5 minutes", i, cl.seenBy(), n-1)
			}
			time.Sleep(10 * time.Millisecond)
		}
		cl.mu.Lock()
		for _, t := range cl.seen {
			lat = append(lat, t.Sub(start).Seconds())
		}
		cl.mu.Unlock()
		time.Sleep(300 * time.Millisecond) // let retransmissions of this change die down
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2]*1000, "p50-ms")
	b.ReportMetric(lat[len(lat)*99/100]*1000, "p99-ms")
	b.ReportMetric(lat[len(lat)-1]*1000, "max-ms")
	if !cl.steadyDone {
		cl.measureSteady(b)
	}
	b.ReportMetric(cl.payloadRate, "payload-B/node/s")
	b.ReportMetric(cl.wireRate, "wire-B/node/s")
	b.ReportMetric(cl.cpuPct, "cpu-%/node")
	b.ReportMetric(loadAvg(), "loadavg1")
}

func (cl *benchCluster) seenBy() int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return len(cl.seen)
}

// measureSteady: every member republishes its resources every 5 s, as
// the driver does: memory drifts by 1 MiB (below MemBroadcastDelta, so
// push-pull carries it), and every sixth time (each member every 30 s,
// staggered) it jumps by 1 GiB, as when a task starts, which is broadcast.
func (cl *benchCluster) measureSteady(b *testing.B) {
	window := benchSteady(b)
	n := float64(len(cl.ms))
	publish := func(round int) {
		for i, m := range cl.ms {
			used := uint64(4<<30 + round<<20)
			if (i+round)%12 < 6 {
				used += 1 << 30
			}
			_ = m.SetResources(Resources{MemTotalBytes: 1 << 40, MemUsedBytes: used})
		}
	}
	publish(0) // the jump from the convergence phase's values: not measured
	time.Sleep(5 * time.Second)
	payload0, wire0, cpu0 := cl.payloadSent(), cl.wire.sent.Load(), cpuTime()
	t0 := time.Now()
	for round := 1; time.Since(t0) < window; round++ {
		publish(round)
		time.Sleep(min(5*time.Second, window-time.Since(t0)))
	}
	secs := time.Since(t0).Seconds()
	cl.payloadRate = (cl.payloadSent() - payload0) / n / secs
	cl.wireRate = float64(cl.wire.sent.Load()-wire0) / n / secs
	cl.cpuPct = (cpuTime() - cpu0).Seconds() / secs / n * 100
	cl.steadyDone = true
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAvg is the machine's 1-minute load average (0 where unknown): the
// figures are only comparable at similar load.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}

// payloadSent sums our payload bytes sent over all members (each member
// has its own counter; a shared registry would keep only the first).
func (cl *benchCluster) payloadSent() float64 {
	var sum float64
	for _, m := range cl.ms {
		var d dto.Metric
		if m.metrics.bytesOut.Write(&d) == nil {
			sum += d.GetCounter().GetValue()
		}
	}
	return sum
}
