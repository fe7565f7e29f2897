package gossip

import (
	"net"
	"testing"
	"time"
)

func probeConfig(c *Config) {
	c.Probe.Disabled = false
	c.Probe.Port = -1
	c.Probe.Interval = 100 * time.Millisecond
	c.Probe.Share = 0.5
	c.Probe.Timeout = 5 * time.Second
}

func TestProbeMeasuresLoopbackLinks(t *testing.T) {
	ms := startCluster(t, 3, probeConfig)
	waitFor(t, "every pair measured, seen by everyone", 30*time.Second, func() bool {
		for _, m := range ms {
			v := m.View()
			for _, a := range ms {
				for _, b := range ms {
					if a == b {
						continue
					}
					if bw, ok := v.Bandwidth(a.Name(), b.Name()); !ok || bw <= 0 {
						return false
					}
				}
			}
		}
		return true
	})
	links := ms[0].View().NodeLinks(ms[0].Name())
	if len(links) != 2 || links[0].BandwidthBps > links[1].BandwidthBps {
		t.Fatalf("links of node 0 = %+v, want 2 slowest first", links)
	}
	// Loopback moves well over 10 MB/s even on a busy machine.
	if links[0].BandwidthBps < 10e6 {
		t.Fatalf("loopback measured at %.0f B/s", links[0].BandwidthBps)
	}
}

func TestProbeEndpointRefusesBadToken(t *testing.T) {
	ms := startCluster(t, 1, probeConfig)
	addr := net.JoinHostPort("127.0.0.1", itoa(ms[0].probePort()))
	// A prober holding a different key is denied.
	other := &prober{m: ms[0], keys: probeKeys([][]byte{[]byte("fedcba9876543210fedcba9876543210")})}
	other.client.share = 1
	if _, _, err := other.measure(addr, 1<<20); err == nil {
		t.Fatal("probe with a foreign key was served")
	}
	// Out-of-range sizes are refused, even with the right key.
	own := &prober{m: ms[0], keys: probeKeys([][]byte{testKey})}
	if _, _, err := own.measure(addr, 1<<40); err == nil {
		t.Fatal("oversized probe was served")
	}
	// Garbage on the socket does not take the endpoint down.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("GET / HTTP/1.0\r\n\r\n" + string(make([]byte, 100))))
	_ = c.Close()
	if _, _, err := own.measure(addr, 1<<20); err != nil {
		t.Fatalf("valid probe after garbage: %v", err)
	}
}

func TestDutyLimiterKeepsShare(t *testing.T) {
	l := dutyLimiter{share: 0.01}
	now := time.Unix(0, 0)
	if !l.take(now, time.Second) {
		t.Fatal("first take refused")
	}
	l.charge(now.Add(100*time.Millisecond), 100*time.Millisecond)
	if l.allow(now.Add(5 * time.Second)) {
		t.Fatal("allowed a probe 5 s after a 100 ms one at a 1 % share")
	}
	if !l.allow(now.Add(100*time.Millisecond + 9900*time.Millisecond)) {
		t.Fatal("refused a probe after 99× the probe's duration")
	}
}
