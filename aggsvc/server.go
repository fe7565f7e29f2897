package aggsvc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Server is one aggsvc instance: a TCP listener, the registered jobs and the
// shared summation pool.
type Server struct {
	cfg   Config
	log   hclog.Logger
	m     *metrics
	sched *scheduler
	jobTk func(string) string
	admin string

	cpuNanos atomic.Int64 // pool CPU time over all jobs

	mu     sync.Mutex
	jobs   map[string]*job
	conns  map[*conn]struct{}
	ln     net.Listener
	closed bool
	wg     sync.WaitGroup
}

// NewServer validates cfg and starts the pool; call Serve to accept.
func NewServer(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, m: newMetrics(cfg.Registry),
		jobs: map[string]*job{}, conns: map[*conn]struct{}{}, admin: AdminToken(cfg.Key)}
	key := append([]byte(nil), cfg.Key...)
	s.jobTk = func(j string) string { return JobToken(key, j) }
	s.sched = newScheduler(cfg.Cores, s.observe)
	return s, nil
}

func (s *Server) observe(q *jobQueue, wait, cpu time.Duration) {
	s.m.queueDelay.Observe(wait.Seconds())
	s.m.jobCPU.WithLabelValues(q.name).Add(cpu.Seconds())
	s.m.busy.Add(cpu.Seconds())
	s.cpuNanos.Add(int64(cpu))
}

// Serve accepts connections on ln until Close; TLS wraps them when set.
func (s *Server) Serve(ln net.Listener) error {
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("aggsvc: server closed")
	}
	s.ln = ln
	s.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		s.startConn(nc)
	}
}

func (s *Server) startConn(nc net.Conn) {
	c := newConn(s, nc)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(2) // under mu: Close cannot be waiting yet
	s.mu.Unlock()
	s.m.conns.Inc()
	go func() { defer s.wg.Done(); c.writeLoop() }()
	go func() { defer s.wg.Done(); c.readLoop() }()
}

func (s *Server) connDone(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.m.conns.Dec()
}

// Addr is the listening address once Serve runs.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops accepting, closes every connection and the pool.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	ln := s.ln
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	for _, c := range conns {
		c.close()
	}
	s.wg.Wait()
	s.sched.close()
	return nil
}

// register creates a job or checks an existing one agrees on its size.
func (s *Server) register(name string, workers, weight int) (*job, error) {
	if weight <= 0 {
		weight = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if j := s.jobs[name]; j != nil {
		if j.workers != workers {
			return nil, fmt.Errorf("job %q is registered with %d workers, this worker says %d", name, j.workers, workers)
		}
		return j, nil
	}
	if len(s.jobs) >= s.cfg.MaxJobs {
		return nil, fmt.Errorf("server holds its limit of %d jobs", s.cfg.MaxJobs)
	}
	j := s.newJob(name, workers, weight)
	s.jobs[name] = j
	s.m.jobs.Set(float64(len(s.jobs)))
	s.log.Info("job registered", "job", name, "workers", workers, "weight", weight)
	return j, nil
}

// Unregister drops a job: its open partitions fail with CodeJobGone and its
// queued work is discarded.
func (s *Server) Unregister(name string) bool {
	s.mu.Lock()
	j := s.jobs[name]
	delete(s.jobs, name)
	s.m.jobs.Set(float64(len(s.jobs)))
	s.mu.Unlock()
	if j == nil {
		return false
	}
	s.sched.dropQueue(j.q)
	s.drop(j)
	s.m.steps.DeletePartialMatch(map[string]string{"job": name})
	s.m.jobCPU.DeleteLabelValues(name)
	s.log.Info("job unregistered", "job", name)
	return true
}

// Load is what the service reports in Consul meta.
type Load struct {
	Jobs    int
	Conns   int
	Queued  int
	MemUsed int64
}

// Load samples the server's current load.
func (s *Server) Load() Load {
	s.mu.Lock()
	l := Load{Jobs: len(s.jobs), Conns: len(s.conns)}
	jobs := make([]*job, 0, len(s.jobs))
	for _, j := range s.jobs {
		jobs = append(jobs, j)
	}
	s.mu.Unlock()
	for _, j := range jobs {
		j.mu.Lock()
		l.MemUsed += j.mem
		j.mu.Unlock()
	}
	l.Queued = s.sched.queued()
	return l
}

// ListenAndServe listens on addr and serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); s.Close() }()
	return s.Serve(ln)
}
