package driver

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"

	"github.com/caravan-dl/caravan/memshare/consumer"
	"github.com/caravan-dl/caravan/memshare/nbd"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
)

// memEndpoint serves a task's volume over NBD on loopback TCP. Its
// address and export name are kept in the task's driver state, so a
// restarted plugin serves the same CARAVAN_REMOTE_MEMORY_URI again. The
// export name is a 128-bit random secret: only a holder of the URI (the
// task) can attach.
type memEndpoint struct {
	srv  *nbd.Server
	ln   net.Listener
	name string
}

// serveEndpoint listens on addr ("" = a free loopback port) and serves
// exp as name ("" = a new secret).
func serveEndpoint(exp nbd.Export, addr, name string, logger hclog.Logger, reg prometheus.Registerer) (*memEndpoint, error) {
	if name == "" {
		var secret [16]byte
		if _, err := rand.Read(secret[:]); err != nil {
			return nil, err
		}
		name = "caravan-" + hex.EncodeToString(secret[:])
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if host, _, err := net.SplitHostPort(addr); err != nil || !net.ParseIP(host).IsLoopback() {
		return nil, fmt.Errorf("remote memory endpoint: %q is not a loopback address", addr)
	}
	ln, err := listenRetry(addr)
	if err != nil {
		return nil, fmt.Errorf("remote memory endpoint: %w", err)
	}
	e := &memEndpoint{ln: ln, name: name}
	e.srv, err = nbd.NewServer(nbd.ServerConfig{
		Exports: secretExport{name: name, exp: exp}, Logger: logger,
		Metrics: nbd.NewMetrics(reg, "caravan", "memshare_endpoint"),
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	go func() {
		// Serve returns when Close closes the listener; the server logs
		// per-connection failures itself.
		_ = e.srv.Serve(ln)
	}()
	return e, nil
}

// addr is the listening host:port.
func (e *memEndpoint) addr() string { return e.ln.Addr().String() }

// uri is the NBD URI (libnbd, qemu and nbd-client syntax).
func (e *memEndpoint) uri() string { return "nbd://" + e.addr() + "/" + e.name }

func (e *memEndpoint) Close() error { return e.srv.Close() }

type secretExport struct {
	name string
	exp  nbd.Export
}

func (s secretExport) Lookup(name string) (nbd.Export, error) {
	if subtle.ConstantTimeCompare([]byte(name), []byte(s.name)) != 1 {
		return nil, errors.New("unknown export (the name is in CARAVAN_REMOTE_MEMORY_URI)")
	}
	return s.exp, nil
}

func (secretExport) List() []string { return nil }

// savingExport is a task's volume whose saved layout is brought up to
// date before a write is acknowledged, whenever the write found a slab
// failed or replaced: a slab that missed an acknowledged write is on disk
// as dead before the task hears "done", so a restarted plugin never reads
// it as current.
type savingExport struct {
	*consumer.Volume
	saver *layoutSaver
}

func (s savingExport) WriteAt(p []byte, off uint64, fua bool) error {
	err := s.Volume.WriteAt(p, off, fua)
	s.saver.sync(off, uint64(len(p)))
	return err
}

func (s savingExport) Trim(off uint64, length uint32) error {
	err := s.Volume.Trim(off, length)
	s.saver.sync(off, uint64(length))
	return err
}

// DoBatch implements nbd.BatchExport (the volume's batching is kept).
func (s savingExport) DoBatch(reqs []*nbd.BatchRequest) {
	s.Volume.DoBatch(reqs)
	for _, r := range reqs {
		if r.Write {
			s.saver.sync(r.Off, uint64(len(r.Data)))
		}
	}
}
