package live

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/http/pprof"
	"strings"
)

// Handler serves the scheduler's HTTP API. Every endpoint requires
// "Authorization: Bearer <token>".
//
//	GET /v1/queue        the queue: running and queued jobs, priority, service, reasons
//	GET /metrics         Prometheus text format
//	GET /debug/pprof/... Go's profiles (only with Config.Pprof)
func (s *Scheduler) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/queue", s.handleQueue)
	mux.HandleFunc("/metrics", s.handleMetrics)
	if s.cfg.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index) // heap, allocs, goroutine, ...
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return authenticate(s.cfg.Token, mux)
}

// authenticate refuses requests without the bearer token, comparing in
// constant time so the token cannot be guessed byte by byte.
func authenticate(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="caravan-scheduler"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Scheduler) handleQueue(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "only GET", http.StatusMethodNotAllowed)
		return
	}
	if len(r.URL.RawQuery) > 0 {
		http.Error(w, "/v1/queue takes no parameters", http.StatusBadRequest)
		return
	}
	v := *s.view.Load()
	v.Leader = s.leader.Load()
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		s.log.Debug("writing the queue view", "error", err) // the client went away
	}
}

func (s *Scheduler) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "only GET", http.StatusMethodNotAllowed)
		return
	}
	s.metrics.handler().ServeHTTP(w, r)
}
