package scale

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
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
	mu              sync.Mutex
	byEndpoint      map[string]int64 // "GET /v1/job/:id" → requests
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
	c := &apiCounter{addr: "http://" + ln.Addr().String(), byEndpoint: map[string]int64{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // the event stream must not be buffered
	rp.ModifyResponse = func(r *http.Response) error {
		r.Body = &countingBody{ReadCloser: r.Body, n: &c.bytes}
		return nil
	}
	c.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		c.mu.Lock()
		c.byEndpoint[r.Method+" "+endpoint(r.URL.Path)]++
		c.mu.Unlock()
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

// endpoint is a request path with its object IDs replaced by ":id", so
// calls group by endpoint.
func endpoint(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if i >= 3 && (i > 3 || parts[2] != "client") && p != "" && !knownWord[p] {
			parts[i] = ":id"
		}
	}
	return strings.Join(parts, "/")
}

var knownWord = map[string]bool{"allocations": true, "evaluations": true, "stop": true, "readat": true,
	"fs": true, "stream": true, "cat": true, "lock": true, "renew": true, "release": true, "submission": true,
	"summary": true, "plan": true, "part": true, "versions": true, "deployments": true}

// top lists the n busiest endpoints.
func (c *apiCounter) top(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	type kv struct {
		k string
		v int64
	}
	var all []kv
	for k, v := range c.byEndpoint {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v })
	var b strings.Builder
	for i, e := range all {
		if i == n {
			break
		}
		fmt.Fprintf(&b, "  %6d  %s\n", e.v, e.k)
	}
	return b.String()
}
