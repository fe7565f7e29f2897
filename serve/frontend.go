package serve

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config is the front end's configuration. Zero values take the defaults.
type Config struct {
	Addr         string // listen address (default 127.0.0.1:8700)
	Token        string // bearer token clients must send (required)
	TLSCertFile  string // serve HTTPS when both are set
	TLSKeyFile   string
	MaxBodyBytes int64  // request body limit (default 1 MiB)
	Policy       string // orloj (default), clockwork or fifo
	Models       map[string]ModelConfig
	// Tick bounds how late a hopeless request is noticed between events
	// (default 5ms).
	Tick     time.Duration
	Logger   hclog.Logger
	Registry *prometheus.Registry // default a new one
}

func (c *Config) defaults() error {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:8700"
	}
	if c.Token == "" {
		return errors.New("serve: config token is required (every endpoint authenticates)")
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return errors.New("serve: tls_cert and tls_key go together")
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.Policy == "" {
		c.Policy = "orloj"
	}
	if len(c.Models) == 0 {
		return errors.New("serve: config models: at least one model is required")
	}
	if c.Tick <= 0 {
		c.Tick = 5 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	return nil
}

// Frontend admits requests, queues them per model and dispatches batches.
type Frontend struct {
	cfg    Config
	m      *metrics
	models map[string]*modelQueue
	seq    atomic.Uint64
	// stopped is closed when Run returns.
	stopped chan struct{}
}

// New validates cfg and builds a front end; Run starts its queues.
func New(cfg Config) (*Frontend, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	f := &Frontend{cfg: cfg, m: newMetrics(cfg.Registry), models: map[string]*modelQueue{}, stopped: make(chan struct{})}
	for name, mc := range cfg.Models {
		mc = mc.withDefaults()
		pol, err := NewPolicy(cfg.Policy, mc.Policy)
		if err != nil {
			return nil, err
		}
		f.models[name] = &modelQueue{
			name: name, cfg: mc, policy: pol, dists: NewDists(0), m: f.m, log: cfg.Logger,
			in: make(chan *pending, mc.MaxQueue), done: make(chan batchDone, 64), setW: make(chan workerSet),
			workers: map[string]*workerState{}, tick: cfg.Tick, cooldown: retryCooldown,
		}
		f.m.attainment(cfg.Registry, name)
	}
	return f, nil
}

// Seed records measured batch latencies (offline profiling) in a model's
// distributions. Call it before Run.
func (f *Frontend) Seed(model string, pts []ProfilePoint) error {
	q, ok := f.models[model]
	if !ok {
		return fmt.Errorf("serve: unknown model %q", model)
	}
	for _, p := range pts {
		q.dists.Observe(q.key(p.Batch, p.In, p.Out), p.Latency)
	}
	return nil
}

// Run runs every model's queue until ctx ends.
func (f *Frontend) Run(ctx context.Context) {
	for _, q := range f.models {
		go q.run(ctx)
	}
	<-ctx.Done()
	close(f.stopped)
}

// Models lists the served model names, sorted.
func (f *Frontend) Models() []string {
	out := make([]string, 0, len(f.models))
	for n := range f.models {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// SetWorkers replaces the model's worker set (discovery calls this). It
// returns once the model's queue applies it, so call it after Run started.
func (f *Frontend) SetWorkers(model string, ws []Worker) error {
	q, ok := f.models[model]
	if !ok {
		return fmt.Errorf("serve: unknown model %q", model)
	}
	ack := make(chan struct{})
	select {
	case q.setW <- workerSet{ws: ws, ack: ack}:
		<-ack
		return nil
	case <-f.stopped:
		return errors.New("serve: front end stopped")
	}
}

// Handler serves the API: POST /v1/models/{model}/infer, GET /metrics
// (both with the bearer token) and GET /healthz.
func (f *Frontend) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/models/{model}/infer", f.auth(f.infer))
	mux.Handle("GET /metrics", f.auth(promhttp.HandlerFor(f.cfg.Registry, promhttp.HandlerOpts{}).ServeHTTP))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	return mux
}

func (f *Frontend) auth(next http.HandlerFunc) http.HandlerFunc {
	want := []byte("Bearer " + f.cfg.Token)
	return func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"status": "unauthenticated", "error": "missing or wrong bearer token"})
			return
		}
		next(w, r)
	}
}

func (f *Frontend) infer(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("model")
	q, ok := f.models[name]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"status": "unknown_model", "error": fmt.Sprintf("model %q is not served (have %v)", name, f.Models())})
		return
	}
	req, err := DecodeRequest(http.MaxBytesReader(w, r.Body, f.cfg.MaxBodyBytes), q.cfg.Limits)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"status": "too_large", "error": fmt.Sprintf("request body exceeds %d bytes", mbe.Limit)})
			return
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"status": "invalid", "error": err.Error()})
		return
	}
	writeJSON(w, 0, f.submit(r.Context(), q, req))
}

// submit admits req and waits for its one answer: a result, an early drop,
// or the deadline, whichever comes first.
func (f *Frontend) submit(ctx context.Context, q *modelQueue, req Request) Response {
	slo := q.cfg.SLO
	if req.DeadlineMS > 0 {
		slo = time.Duration(req.DeadlineMS) * time.Millisecond
	}
	p := newPending(f.seq.Add(1), time.Now(), slo, req)
	select {
	case q.in <- p:
	default:
		f.m.answer(q.name, p, OutcomeOverloaded, "queue full", nil, "", 0)
	}
	t := time.NewTimer(time.Until(p.item.Deadline))
	defer t.Stop()
	select {
	case resp := <-p.done:
		return resp
	case <-t.C:
		f.m.answer(q.name, p, OutcomeExceeded, "deadline passed before a result", nil, "", 0)
	case <-ctx.Done():
		f.m.answer(q.name, p, OutcomeCanceled, "client went away", nil, "", 0)
	}
	return <-p.done
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	if r, ok := v.(Response); ok && status == 0 {
		status = r.Status.httpStatus()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // a client gone by now needs nothing
}

// Serve listens on cfg.Addr (TLS when configured) until ctx ends.
func (f *Frontend) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: f.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: f.cfg.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})}
	if f.cfg.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(f.cfg.TLSCertFile, f.cfg.TLSKeyFile)
		if err != nil {
			return fmt.Errorf("serve: tls: %w", err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) // past the grace period connections are cut
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Listen opens cfg.Addr.
func (f *Frontend) Listen() (net.Listener, error) { return net.Listen("tcp", f.cfg.Addr) }
