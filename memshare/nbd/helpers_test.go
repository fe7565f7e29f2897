package nbd

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// memExport is a plain in-memory export for tests.
type memExport struct {
	mu  sync.RWMutex
	buf []byte
}

func (m *memExport) Size() uint64 { return uint64(len(m.buf)) }
func (m *memExport) ReadAt(p []byte, off uint64) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	copy(p, m.buf[off:])
	return nil
}
func (m *memExport) WriteAt(p []byte, off uint64, _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	copy(m.buf[off:], p)
	return nil
}
func (m *memExport) Flush() error { return nil }
func (m *memExport) Trim(off uint64, n uint32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.buf[off : off+uint64(n)])
	return nil
}

// mapExports resolves names from a fixed map.
type mapExports map[string]Export

func (m mapExports) Lookup(name string) (Export, error) {
	if e, ok := m[name]; ok {
		return e, nil
	}
	return nil, errors.New("no such export")
}
func (m mapExports) List() []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// startServer serves exports on a loopback port until the test ends.
func startServer(t testing.TB, cfg ServerConfig) (*Server, string) {
	t.Helper()
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return srv, ln.Addr().String()
}

func dial(t testing.TB, addr string, opts ClientOptions) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, "tcp", addr, opts)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// bytes returns a copy of the export's content, under its lock.
func (m *memExport) bytes() []byte {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return append([]byte(nil), m.buf...)
}
