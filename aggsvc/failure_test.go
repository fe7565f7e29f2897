package aggsvc

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func serverCode(err error) uint16 {
	var se *ServerError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// TestManyJobsConcurrently runs several jobs' workers at once, each step's
// values known in closed form, under -race in CI.
func TestManyJobsConcurrently(t *testing.T) {
	s := startServer(t, nil)
	addr := []string{s.Addr().String()}
	const jobs, workers, steps, n = 6, 4, 8, 3000
	var wg sync.WaitGroup
	errs := make(chan error, jobs*workers)
	for j := range jobs {
		job := fmt.Sprintf("many-%d", j)
		for r := range workers {
			c := dialWorker(t, addr, job, r, workers, func(c *ClientConfig) { c.PartitionElems = 1000; c.Weight = j + 1 })
			wg.Go(func() {
				for st := range steps {
					v := make([]float32, n)
					for i := range v {
						v[i] = float32(r + st + i%7)
					}
					if err := c.AllReduce(within(t, 30*time.Second), uint64(st), v, OpSum); err != nil {
						errs <- fmt.Errorf("%s rank %d step %d: %w", job, r, st, err)
						return
					}
					for i, x := range v {
						if want := float32(workers*(st+i%7) + workers*(workers-1)/2); x != want {
							errs <- fmt.Errorf("%s rank %d step %d elem %d: %v want %v", job, r, st, i, x, want)
							return
						}
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := counterValue(s.m.steps.WithLabelValues("many-0", "ok")); got != steps*3 {
		t.Errorf("partitions ok for many-0 = %v, want %d", got, steps*3)
	}
}

// TestWorkerKilledMidStep: rank 2 pushes step 0, then dies before step 1;
// the others' step 1 fails at once with CodeWorkerLost, naming the rank.
func TestWorkerKilledMidStep(t *testing.T) {
	s := startServer(t, nil)
	addr := []string{s.Addr().String()}
	cs := []*Client{dialWorker(t, addr, "kill", 0, 3, nil), dialWorker(t, addr, "kill", 1, 3, nil), dialWorker(t, addr, "kill", 2, 3, nil)}
	allReduce := func(step uint64, ranks ...int) []error {
		errs := make([]error, len(ranks))
		var wg sync.WaitGroup
		for i, r := range ranks {
			wg.Go(func() { errs[i] = cs[r].AllReduce(within(t, 20*time.Second), step, make([]float32, 100), OpMean) })
		}
		wg.Wait()
		return errs
	}
	for _, err := range allReduce(0, 0, 1, 2) {
		if err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan []error)
	go func() { done <- allReduce(1, 0, 1) }()
	waitFor(t, func() bool { return openSlots(s, "kill") == 1 })
	cs[2].Close() // the worker dies mid-step
	for _, err := range <-done {
		if serverCode(err) != CodeWorkerLost || !strings.Contains(err.Error(), "rank 2 disconnected") {
			t.Fatalf("want worker-lost naming rank 2, got %v", err)
		}
	}
	// Later steps fail at once while rank 2 stays away...
	for _, err := range allReduce(2, 0, 1) {
		if serverCode(err) != CodeWorkerLost || !strings.Contains(err.Error(), "has not reconnected") {
			t.Fatalf("want fast worker-lost, got %v", err)
		}
	}
	// ...and work again once it is back.
	cs[2] = dialWorker(t, addr, "kill", 2, 3, nil)
	for _, err := range allReduce(3, 0, 1, 2) {
		if err != nil {
			t.Fatalf("after rank 2 reconnected: %v", err)
		}
	}
}

// TestIdleJobUnregistered: a job whose workers all left is dropped after
// JobIdleTimeout, so abandoned jobs cannot fill MaxJobs.
func TestIdleJobUnregistered(t *testing.T) {
	s := startServer(t, func(c *Config) { c.JobIdleTimeout = 50 * time.Millisecond })
	c := dialWorker(t, []string{s.Addr().String()}, "idle", 0, 1, nil)
	waitFor(t, func() bool { return s.Load().Jobs == 1 })
	c.Close()
	waitFor(t, func() bool { return s.Load().Jobs == 0 })
}

// TestStalledWorkerTimesOut: a connected rank that never pushes fails the
// step with CodeTimeout after StepTimeout, never a hang.
func TestStalledWorkerTimesOut(t *testing.T) {
	s := startServer(t, func(c *Config) { c.StepTimeout = 300 * time.Millisecond })
	addr := []string{s.Addr().String()}
	c0 := dialWorker(t, addr, "stall", 0, 2, nil)
	dialWorker(t, addr, "stall", 1, 2, nil) // connected, stalled
	err := c0.AllReduce(within(t, 20*time.Second), 5, make([]float32, 10), OpSum)
	if serverCode(err) != CodeTimeout || !strings.Contains(err.Error(), "waiting for rank(s) [1]") {
		t.Fatalf("want timeout naming rank 1, got %v", err)
	}
	if got := counterValue(s.m.steps.WithLabelValues("stall", "timeout")); got != 1 {
		t.Errorf("timeout count %v", got)
	}
}

func TestUnregisterFailsOpenSteps(t *testing.T) {
	s := startServer(t, nil)
	addr := []string{s.Addr().String()}
	c0 := dialWorker(t, addr, "unreg", 0, 2, nil)
	c1 := dialWorker(t, addr, "unreg", 1, 2, nil)
	done := make(chan error)
	go func() { done <- c0.AllReduce(within(t, 20*time.Second), 0, make([]float32, 10), OpSum) }()
	waitFor(t, func() bool { return openSlots(s, "unreg") == 1 })
	if err := c1.Unregister(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; serverCode(err) != CodeJobGone {
		t.Fatalf("want job-gone, got %v", err)
	}
	waitFor(t, func() bool { return s.Load().Jobs == 0 })
}

func TestJobMemoryBounded(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MaxJobBytes = 64 << 10 })
	c0 := dialWorker(t, []string{s.Addr().String()}, "mem", 0, 2, nil)
	err := c0.AllReduce(within(t, 10*time.Second), 0, make([]float32, 32<<10), OpSum)
	if serverCode(err) != CodeOverLimit || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("want over-limit, got %v", err)
	}
}

// TestBadFramesRejected sends bad credentials and malformed frames while a
// healthy job runs; each bad peer gets an error, the job is untouched.
func TestBadFramesRejected(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MaxFrameBytes = 1 << 16 })
	addr := s.Addr().String()
	good := []*Client{dialWorker(t, []string{addr}, "good", 0, 2, nil), dialWorker(t, []string{addr}, "good", 1, 2, nil)}
	hello := helloMsg{Job: "evil", Token: []byte(JobToken(testKey, "other")), Workers: 1}
	push := pushMsg{Step: 1, Partition: 0, DType: Float32, Data: make([]byte, 8)}
	cases := []struct {
		name, want string
		raw        []byte
	}{
		{"wrong token", "not valid for job", frameBytes(frameHello, hello.encode())},
		{"push before hello", "must authenticate first", frameBytes(framePush, push.header(), push.Data)},
		{"oversized", "frame too large", appendHeader(nil, frameHello, 1<<20)},
		{"bad version", "frame version 9", []byte{0, 0, 0, 0, 9, 1, 0, 0}},
		{"truncated hello", "field token", frameBytes(frameHello, []byte{0, 1, 'x'})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := rawExchange(t, addr, tc.raw)
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("got %q, want it to contain %q", msg, tc.want)
			}
		})
	}
	var wg sync.WaitGroup
	for _, c := range good {
		wg.Go(func() {
			if err := c.AllReduce(within(t, 10*time.Second), 0, []float32{1, 2}, OpSum); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := counterValue(s.m.rejected.WithLabelValues("bad_token")); got != 1 {
		t.Errorf("bad_token rejections = %v", got)
	}
}

func frameBytes(typ byte, parts ...[]byte) []byte {
	var b strings.Builder
	writeFrame(&b, typ, parts...)
	return []byte(b.String())
}

// rawExchange writes raw bytes and returns the server's error message.
func rawExchange(t *testing.T, addr string, raw []byte) string {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	nc.Write(raw)
	f, err := readFrame(bufio.NewReader(nc), 1<<16)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	if f.typ != frameError {
		t.Fatalf("answer type %d, want error", f.typ)
	}
	m, err := decodeError(f.body)
	if err != nil {
		t.Fatal(err)
	}
	return m.Message
}

func TestAdminRegisterAndTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	s := startServer(t, func(c *Config) { c.TLS = &tls.Config{Certificates: []tls.Certificate{cert}} })
	addr := s.Addr().String()
	ctls := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	tok, err := Register(within(t, 10*time.Second), addr, ctls, AdminToken(testKey), "reg", 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if tok != JobToken(testKey, "reg") {
		t.Fatal("register returned a different token")
	}
	if _, err := Register(within(t, 10*time.Second), addr, ctls, "forged", "reg", 1, 3); serverCode(err) != CodeUnauthorized {
		t.Fatalf("forged admin token: %v", err)
	}
	c := dialWorker(t, []string{addr}, "reg", 0, 1, func(c *ClientConfig) { c.TLS = ctls })
	v := []float32{1.5, -2}
	if err := c.AllReduce(within(t, 10*time.Second), 0, v, OpSum); err != nil || v[0] != 1.5 || v[1] != -2 {
		t.Fatalf("over TLS: %v %v", v, err)
	}
	if _, err := Dial(within(t, 5*time.Second), ClientConfig{Addrs: []string{addr}, Job: "reg", Token: tok, Workers: 1,
		TLS: &tls.Config{RootCAs: x509.NewCertPool(), ServerName: "127.0.0.1"}}); err == nil {
		t.Fatal("a client that does not trust the server's certificate must fail")
	}
}

// TestSeveralInstancesServeOneJob spreads partitions over two servers.
func TestSeveralInstancesServeOneJob(t *testing.T) {
	a, b := startServer(t, nil), startServer(t, nil)
	addrs := []string{a.Addr().String(), b.Addr().String()}
	cs := []*Client{dialWorker(t, addrs, "ring", 0, 2, func(c *ClientConfig) { c.PartitionElems = 100 }),
		dialWorker(t, addrs, "ring", 1, 2, func(c *ClientConfig) { c.PartitionElems = 100 })}
	var wg sync.WaitGroup
	out := make([][]float32, 2)
	for r, c := range cs {
		wg.Go(func() {
			out[r] = make([]float32, 5000)
			for i := range out[r] {
				out[r][i] = float32(i * (r + 1))
			}
			if err := c.AllReduce(within(t, 20*time.Second), 0, out[r], OpSum); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i, x := range out[0] {
		if x != float32(3*i) || out[1][i] != x {
			t.Fatalf("elem %d: %v %v", i, x, out[1][i])
		}
	}
	na := counterValue(a.m.steps.WithLabelValues("ring", "ok"))
	nb := counterValue(b.m.steps.WithLabelValues("ring", "ok"))
	if na+nb != 50 || na < 10 || nb < 10 {
		t.Fatalf("partitions per instance %v/%v, want 50 spread over both", na, nb)
	}
}

func openSlots(s *Server, job string) int {
	s.mu.Lock()
	j := s.jobs[job]
	s.mu.Unlock()
	if j == nil {
		return -1
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.slots)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}
