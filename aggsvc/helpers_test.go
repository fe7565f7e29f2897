package aggsvc

import (
	"context"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

var testKey = []byte("test-key-0123456789abcdef")

// startServer runs a server on loopback for the test's lifetime.
func startServer(t testing.TB, mod func(*Config)) *Server {
	t.Helper()
	cfg := Config{Key: testKey, Cores: 2, StepTimeout: 10 * time.Second,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: testWriter{t}})}
	if mod != nil {
		mod(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	for s.Addr() == nil {
		time.Sleep(time.Millisecond)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

func dialWorker(t testing.TB, addrs []string, job string, rank, workers int, mod func(*ClientConfig)) *Client {
	t.Helper()
	cfg := ClientConfig{Addrs: addrs, Job: job, Token: JobToken(testKey, job), Rank: rank, Workers: workers}
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatalf("rank %d dial: %v", rank, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func within(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}
