package consumer

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"

	"github.com/caravan-dl/caravan/memshare/nbd"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
)

// Endpoint serves a Volume to its task over NBD on a unix socket or a
// loopback port. The export name is a random secret carried in the URI:
// only a holder of the URI can attach.
type Endpoint struct {
	srv  *nbd.Server
	ln   net.Listener
	name string
	uri  string
	path string
}

// Serve listens on a unix socket at socketPath, or on loopback TCP when
// socketPath is empty, and serves v.
func Serve(v *Volume, socketPath string, logger hclog.Logger, reg prometheus.Registerer) (*Endpoint, error) {
	var secret [16]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return nil, err
	}
	e := &Endpoint{name: "caravan-" + hex.EncodeToString(secret[:]), path: socketPath}
	var err error
	if socketPath != "" {
		_ = os.Remove(socketPath)
		e.ln, err = net.Listen("unix", socketPath)
		if err == nil {
			// The secret export name is the credential; the socket is open
			// so a task running as another user can attach.
			err = os.Chmod(socketPath, 0o666)
		}
		e.uri = "nbd+unix:///" + e.name + "?socket=" + url.QueryEscape(socketPath)
	} else {
		e.ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			e.uri = "nbd://" + e.ln.Addr().String() + "/" + e.name
		}
	}
	if err != nil {
		return nil, fmt.Errorf("remote memory endpoint: %w", err)
	}
	var m *nbd.Metrics
	if reg != nil {
		m = nbd.NewMetrics(reg, "caravan", "memshare_endpoint")
	}
	e.srv, err = nbd.NewServer(nbd.ServerConfig{Exports: e.exports(v), Logger: logger, Metrics: m})
	if err != nil {
		e.ln.Close()
		return nil, err
	}
	go func() {
		// Serve returns when Close closes the listener; the server logs
		// per-connection failures itself.
		_ = e.srv.Serve(e.ln)
	}()
	return e, nil
}

// URI is the NBD URI (libnbd, qemu and nbd-client syntax).
func (e *Endpoint) URI() string { return e.uri }

// Close stops serving (the Volume stays open).
func (e *Endpoint) Close() error {
	err := e.srv.Close()
	if e.path != "" {
		_ = os.Remove(e.path)
	}
	return err
}

type secretExport struct {
	name string
	v    *Volume
}

func (e *Endpoint) exports(v *Volume) nbd.Exports { return secretExport{name: e.name, v: v} }

func (s secretExport) Lookup(name string) (nbd.Export, error) {
	if subtle.ConstantTimeCompare([]byte(name), []byte(s.name)) != 1 {
		return nil, errors.New("unknown export (the name is in CARAVAN_REMOTE_MEMORY_URI)")
	}
	return s.v, nil
}

func (secretExport) List() []string { return nil }
