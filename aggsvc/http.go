package aggsvc

import (
	"crypto/subtle"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves GET /metrics (Prometheus, bearer token required) and
// GET /healthz (for the Consul check; says only "ok").
func (s *Server) Handler(metricsToken string) http.Handler {
	want := []byte("Bearer " + metricsToken)
	metrics := promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		metrics.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}
