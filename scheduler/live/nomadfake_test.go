package live

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// schedulerOn is a scheduler (token "t", defaults otherwise) whose Nomad
// is h, served on loopback for the test's duration.
func schedulerOn(t *testing.T, h http.HandlerFunc) *Scheduler {
	t.Helper()
	s, err := New(Config{Token: "t"}, clientOn(t, h), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// clientOn is a Nomad API client for h, served on loopback.
func clientOn(t *testing.T, h http.Handler) *api.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := api.NewClient(&api.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// peak counts requests in flight and the most seen at once.
type peak struct{ now, most atomic.Int64 }

// enter counts a request in; the caller defers leave.
func (p *peak) enter() {
	n := p.now.Add(1)
	for m := p.most.Load(); n > m && !p.most.CompareAndSwap(m, n); m = p.most.Load() {
	}
}

func (p *peak) leave() { p.now.Add(-1) }
