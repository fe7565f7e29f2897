package gossip

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// BenchmarkConvergence measures, on loopback with memberlist's default
// LAN timers, the time from one member's change to every member seeing
// it (p50/p99 over members and changes), and the gossip payload bytes
// each member sends per second in steady state. Not a test: it starts
// hundreds of members.
//
//	go test ./gossip -run '^$' -bench Convergence -benchtime 20x
func BenchmarkConvergence(b *testing.B) {
	for _, n := range []int{50, 100, 200} {
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) { benchConvergence(b, n) })
	}
}

func benchConvergence(b *testing.B, n int) {
	reg := prometheus.NewRegistry()
	var mu sync.Mutex
	var target uint64
	seen := map[string]time.Time{}
	var ms []*Member
	for i := range n {
		c := DefaultConfig(fmt.Sprintf("m%03d", i))
		c.BindAddr, c.BindPort, c.Keys = "127.0.0.1", 0, [][]byte{testKey}
		c.Probe.Disabled = true
		c.CoordInterval = time.Hour // only resource changes, as measured
		c.Logger = hclog.NewNullLogger()
		c.Registry = reg // counters are shared: totals over all members
		if i > 0 {
			c.Join = []string{ms[rand.IntN(i)].Addr()}
		}
		m, err := New(c)
		if err != nil {
			b.Fatal(err)
		}
		name := c.Name
		m.onChange = func(node string) {
			if node != "m000" {
				return
			}
			r, _ := m.store.get("m000")
			mu.Lock()
			if r.Sections[SectionResources].Version >= target && seen[name].IsZero() {
				seen[name] = time.Now()
			}
			mu.Unlock()
		}
		ms = append(ms, m)
	}
	defer func() {
		for _, m := range ms {
			_ = m.Shutdown()
		}
	}()
	waitFor(b, "full membership", 2*time.Minute, func() bool {
		for _, m := range ms {
			if m.numMembers() != n {
				return false
			}
		}
		return true
	})
	var lat []float64
	b.ResetTimer()
	for i := range b.N {
		mu.Lock()
		clear(seen)
		target = ms[0].lastVer + 1
		mu.Unlock()
		start := time.Now()
		_ = ms[0].SetResources(Resources{MemTotalBytes: 1 << 40, MemUsedBytes: uint64(i + 1)})
		waitFor(b, "every member to see the change", time.Minute, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen) == n
		})
		mu.Lock()
		for _, t := range seen {
			lat = append(lat, t.Sub(start).Seconds())
		}
		mu.Unlock()
		time.Sleep(500 * time.Millisecond)
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2]*1000, "p50-ms")
	b.ReportMetric(lat[len(lat)*99/100]*1000, "p99-ms")
	b.ReportMetric(lat[len(lat)-1]*1000, "max-ms")
	// Steady state: every member republishes its resources every 5 s (as
	// the driver does when nothing changes, no new version is made, so
	// make each one change), measured over 35 s to include a push-pull.
	before := counter(b, reg, "caravan_gossip_sent_bytes_total")
	t0 := time.Now()
	for round := 0; time.Since(t0) < 35*time.Second; round++ {
		for i, m := range ms {
			_ = m.SetResources(Resources{MemTotalBytes: 1 << 40, MemUsedBytes: uint64(round*1000 + i)})
		}
		time.Sleep(5 * time.Second)
	}
	sent := counter(b, reg, "caravan_gossip_sent_bytes_total") - before
	b.ReportMetric(sent/float64(n)/time.Since(t0).Seconds(), "payload-B/node/s")
}

func counter(b *testing.B, reg *prometheus.Registry, name string) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			var sum float64
			for _, m := range mf.GetMetric() {
				sum += metricValue(m)
			}
			return sum
		}
	}
	return 0
}

func metricValue(m *dto.Metric) float64 { return m.GetCounter().GetValue() }
