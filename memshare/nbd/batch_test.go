package nbd

import (
	"bytes"
	"sync"
	"testing"
)

// batchExport is a memExport that serves batches and records their sizes;
// a request at offset failAt fails.
type batchExport struct {
	memExport
	mu     sync.Mutex
	sizes  []int
	failAt uint64
}

func (b *batchExport) DoBatch(reqs []*BatchRequest) {
	b.mu.Lock()
	b.sizes = append(b.sizes, len(reqs))
	b.mu.Unlock()
	for _, r := range reqs {
		switch {
		case r.Off == b.failAt:
			r.Err = &Error{Errno: EIO, Msg: "injected"}
		case r.Write:
			r.Err = b.WriteAt(r.Data, r.Off, false)
		default:
			r.Err = b.ReadAt(r.Data, r.Off)
		}
	}
}

// TestBatchedRequests: corked pipelined requests reach a BatchExport
// together; each gets its own reply (data, or its error), and requests
// that cannot join a batch (flush, out of range) are still answered.
func TestBatchedRequests(t *testing.T) {
	ex := &batchExport{memExport: memExport{buf: make([]byte, 1<<20)}, failAt: 7 * 4096}
	_, addr := startServer(t, ServerConfig{Exports: mapExports{"x": ex}})
	c := dial(t, addr, ClientOptions{Export: "x"})
	data := func(i int) []byte { return bytes.Repeat([]byte{byte(i + 1)}, 4096) }
	c.Cork()
	var ws []*Pending
	for i := range 8 {
		ws = append(ws, c.WriteAtAsync(data(i), uint64(i)*4096))
	}
	c.Uncork()
	for i, p := range ws {
		err := p.Wait()
		if (i == 7) != (err != nil) {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	c.Cork()
	bufs := make([][]byte, 7)
	var rs []*Pending
	for i := range bufs {
		bufs[i] = make([]byte, 4096)
		rs = append(rs, c.ReadAtAsync(bufs[i], uint64(i)*4096))
	}
	bad := c.ReadAtAsync(make([]byte, 4096), 1<<20) // beyond the export
	c.Uncork()
	for i, p := range rs {
		if err := p.Wait(); err != nil || !bytes.Equal(bufs[i], data(i)) {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if err := bad.Wait(); err == nil {
		t.Fatal("read beyond the export succeeded")
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if len(ex.sizes) == 0 || max(ex.sizes[0], ex.sizes[len(ex.sizes)-1]) < 2 {
		t.Fatalf("batch sizes %v: pipelined requests were not served together", ex.sizes)
	}
}
