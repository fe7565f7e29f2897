package live

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Serve runs the HTTP API (TLS when Config.TLSCertFile is set) beside Run
// until ctx ends, then shuts both down, releasing the leader lock so a
// standby takes over at once.
func (s *Scheduler) Serve(ctx context.Context) error {
	ln, err := s.listen()
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	s.log.Info("serving the scheduler API", "addr", ln.Addr().String(), "tls", s.cfg.TLSCertFile != "")
	err = s.Run(ctx)
	s.log.Info("shutting down", "reason", context.Cause(ctx))
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shut); serr != nil {
		s.log.Warn("API shutdown", "error", serr)
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("serve API: %w", serr))
	}
	return err
}

// listen opens the API's listener, wrapped in TLS when configured.
func (s *Scheduler) listen() (net.Listener, error) {
	var tc *tls.Config
	if s.cfg.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(s.cfg.TLSCertFile, s.cfg.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls-cert/tls-key: %w", err)
		}
		tc = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
	}
	if tc != nil {
		ln = tls.NewListener(ln, tc)
	}
	return ln, nil
}
