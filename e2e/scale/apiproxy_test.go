package scale

import (
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
)

// apiCounter is a reverse proxy in front of the Nomad HTTP API that counts
// the scheduler's requests and the bytes Nomad sends back (event stream
// included), so a run reports the load the scheduler puts on the server.
type apiCounter struct {
	requests, bytes atomic.Int64
	srv             *http.Server
	addr            string
}

func startAPICounter(b *testing.B, target string) *apiCounter {
	u, err := url.Parse(target)
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	c := &apiCounter{addr: "http://" + ln.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // the event stream must not be buffered
	rp.ModifyResponse = func(r *http.Response) error {
		r.Body = &countingBody{ReadCloser: r.Body, n: &c.bytes}
		return nil
	}
	c.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = c.srv.Serve(ln) }()
	return c
}

func (c *apiCounter) close() { _ = c.srv.Close() }

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
