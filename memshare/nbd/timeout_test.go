package nbd

import (
	"testing"
	"time"
)

// stuckExport never answers a read until released.
type stuckExport struct {
	*memExport
	release chan struct{}
}

func (s stuckExport) ReadAt(p []byte, off uint64) error {
	<-s.release
	return s.memExport.ReadAt(p, off)
}

// TestUnansweredRequestClosesClient: a server that stops answering is
// treated as dead within the client's timeout: the request fails, the
// client closes, and requests that were answered are unaffected.
func TestUnansweredRequestClosesClient(t *testing.T) {
	exp := stuckExport{&memExport{buf: make([]byte, 1<<20)}, make(chan struct{})}
	defer close(exp.release)
	_, addr := startServer(t, ServerConfig{Exports: mapExports{"disk": exp}})
	c := dial(t, addr, ClientOptions{Export: "disk", Timeout: 200 * time.Millisecond})
	if err := c.WriteAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	err := c.ReadAt(make([]byte, 4096), 0)
	if err == nil {
		t.Fatal("a read with no reply succeeded")
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("client still open after its request timed out")
	}
	if err := c.WriteAt(make([]byte, 4096), 0); err == nil {
		t.Fatal("a closed client accepted a write")
	}
}
