package nbd

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Export is one byte range a server offers. Offsets and lengths reaching
// it are already checked against Size. Methods may be called concurrently.
type Export interface {
	Size() uint64
	ReadAt(p []byte, off uint64) error
	WriteAt(p []byte, off uint64, fua bool) error
	Flush() error
	Trim(off uint64, length uint32) error
}

// Exports resolves export names. Lookup's error message goes to the client
// in NBD_REP_ERR_UNKNOWN; List returns the names NBD_OPT_LIST shows (an
// exporter whose names are secrets returns none).
type Exports interface {
	Lookup(name string) (Export, error)
	List() []string
}

// Error is an I/O error with a protocol errno; any other error from an
// Export is sent as EIO.
type Error struct {
	Errno uint32
	Msg   string
}

func (e *Error) Error() string { return e.Msg }

// ServerConfig configures a Server. Zero values take the defaults.
type ServerConfig struct {
	Exports Exports
	// TLS, when set, enables NBD_OPT_STARTTLS; RequireTLS refuses every
	// other option (NBD_REP_ERR_TLS_REQD) until TLS is up.
	TLS        *tls.Config
	RequireTLS bool
	// HandshakeTimeout bounds option haggling (default 10s).
	HandshakeTimeout time.Duration
	// MaxInFlight bounds concurrent requests per connection (default 64).
	MaxInFlight int
	// Inline serves each request on the connection's reading goroutine, in
	// order: cheaper for exports that answer at memory speed (a donor's
	// slab), wrong for ones that wait on the network.
	Inline bool
	Logger hclog.Logger
	// Metrics, when set, observes each request.
	Metrics *Metrics
}

// Server serves NBD on any number of listeners.
type Server struct {
	cfg   ServerConfig
	mu    sync.Mutex
	lns   map[net.Listener]struct{}
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
	done  bool
}

// NewServer validates cfg and returns a server.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Exports == nil {
		return nil, errors.New("nbd: ServerConfig.Exports is required")
	}
	if cfg.RequireTLS && cfg.TLS == nil {
		return nil, errors.New("nbd: RequireTLS needs ServerConfig.TLS")
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 64
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Server{cfg: cfg, lns: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{}}, nil
}

// Serve accepts connections until ln is closed or Close is called.
func (s *Server) Serve(ln net.Listener) error {
	if !s.track(ln) {
		return net.ErrClosed
	}
	defer s.untrack(ln)
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.ServeConn(c)
		}()
	}
}

// ServeConn runs one client connection to its end and closes it. A
// protocol error from this client ends only this connection.
func (s *Server) ServeConn(c net.Conn) {
	if !s.trackConn(c) {
		c.Close()
		return
	}
	defer func() {
		s.untrackConn(c)
		c.Close()
	}()
	sess := &session{srv: s, conn: c}
	if err := sess.handshake(); err != nil {
		if !errors.Is(err, errAbort) {
			s.cfg.Logger.Debug("nbd handshake ended", "remote", c.RemoteAddr(), "error", err)
		}
		return
	}
	if err := sess.transmit(); err != nil {
		s.cfg.Logger.Debug("nbd connection ended", "remote", c.RemoteAddr(), "error", err)
	}
}

// Close stops the listeners and ends every connection.
func (s *Server) Close() error {
	s.mu.Lock()
	s.done = true
	for ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

func (s *Server) track(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	s.lns[ln] = struct{}{}
	return true
}

func (s *Server) untrack(ln net.Listener) {
	s.mu.Lock()
	delete(s.lns, ln)
	s.mu.Unlock()
}

func (s *Server) trackConn(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrackConn(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}
