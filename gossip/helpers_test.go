package gossip

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// syncBuf collects log output from many goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// steadyTune gossips and push-pulls often (fast tests) but keeps failure
// detection tolerant of a loaded machine.
func steadyTune(c *memberlist.Config) {
	c.GossipInterval = 50 * time.Millisecond
	c.PushPullInterval = 2 * time.Second
	c.ProbeInterval = 500 * time.Millisecond
	c.ProbeTimeout = 400 * time.Millisecond
}

// fastTune shortens memberlist's timers so failures are noticed in
// about a second on loopback.
func fastTune(c *memberlist.Config) {
	c.GossipInterval = 50 * time.Millisecond
	c.ProbeInterval = 200 * time.Millisecond
	c.ProbeTimeout = 100 * time.Millisecond
	c.SuspicionMult = 2
	c.PushPullInterval = 2 * time.Second
	c.TCPTimeout = 2 * time.Second
}

func testConfig(name string, keys ...[]byte) *Config {
	c := DefaultConfig(name)
	c.BindAddr = "127.0.0.1"
	c.BindPort = 0
	c.Keys = keys
	c.CoordInterval = 200 * time.Millisecond
	c.Probe.Disabled = true
	c.Tune = steadyTune
	c.Logger = hclog.New(&hclog.LoggerOptions{Name: name, Level: hclog.Warn, Output: hclog.DefaultOutput})
	return c
}

func startMember(t testing.TB, cfg *Config) *Member {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("starting %s: %v", cfg.Name, err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return m
}

// startCluster starts n members joined to the first.
func startCluster(t testing.TB, n int, mod func(*Config)) []*Member {
	t.Helper()
	var ms []*Member
	for i := range n {
		c := testConfig(fmt.Sprintf("node-%03d", i), testKey)
		if i > 0 {
			c.Join = []string{ms[0].Addr()}
		}
		if mod != nil {
			mod(c)
		}
		ms = append(ms, startMember(t, c))
	}
	return ms
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func itoa(i int) string { return fmt.Sprint(i) }
