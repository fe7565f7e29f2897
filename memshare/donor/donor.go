package donor

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/nbd"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
)

// Donor serves leased slabs over NBD and the lease API over HTTP.
type Donor struct {
	cfg   Config
	store *store
	nbd   *nbd.Server
	http  *http.Server

	mu     sync.Mutex
	nbdLn  net.Listener
	apiLn  net.Listener
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New validates cfg and builds a donor; Start makes it serve.
func New(cfg Config) (*Donor, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	signer, err := memshare.NewSigner(cfg.Key)
	if err != nil {
		return nil, err
	}
	m := newMetrics(cfg.Registry)
	st := newStore(cfg, signer, m)
	srv, err := nbd.NewServer(nbd.ServerConfig{
		Exports: exports{s: st}, TLS: cfg.TLS, RequireTLS: cfg.RequireTLS,
		Logger: cfg.Logger.Named("nbd"), Metrics: m.nbd, Inline: true,
	})
	if err != nil {
		return nil, err
	}
	gatherer, _ := cfg.Registry.(prometheus.Gatherer)
	if gatherer == nil {
		gatherer = prometheus.NewRegistry()
	}
	d := &Donor{cfg: cfg, store: st, nbd: srv}
	d.http = &http.Server{
		Handler:           apiHandler(st, memshare.APIToken(cfg.Key), gatherer),
		ReadHeaderTimeout: 5 * time.Second,
		TLSConfig:         cfg.TLS,
		ErrorLog:          cfg.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	return d, nil
}

// Start serves NBD on nbdLn and the API on apiLn, and runs the sweeper.
func (d *Donor) Start(nbdLn, apiLn net.Listener) {
	ctx, cancel := context.WithCancel(context.Background())
	d.mu.Lock()
	d.nbdLn, d.apiLn, d.cancel = nbdLn, apiLn, cancel
	d.mu.Unlock()
	if d.cfg.TLS != nil {
		apiLn = tls.NewListener(apiLn, d.cfg.TLS)
	}
	d.wg.Add(3)
	go func() { defer d.wg.Done(); _ = d.nbd.Serve(nbdLn) }()
	go func() {
		defer d.wg.Done()
		if err := d.http.Serve(apiLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.cfg.Logger.Error("lease API stopped", "error", err)
		}
	}()
	go func() { defer d.wg.Done(); d.sweepLoop(ctx) }()
}

// Info is how consumers reach this donor.
func (d *Donor) Info() memshare.DonorInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	return memshare.DonorInfo{Node: d.cfg.Node, NBDAddr: d.nbdLn.Addr().String(), APIAddr: d.apiLn.Addr().String()}
}

// Status is the donor's current accounting.
func (d *Donor) Status() memshare.DonorStatus { return d.store.status() }

// Sweep runs one expiry/reclaim pass now (the loop runs it periodically).
func (d *Donor) Sweep() { d.store.sweep(time.Now()) }

func (d *Donor) sweepLoop(ctx context.Context) {
	t := time.NewTicker(d.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			d.store.sweep(now)
		}
	}
}

// Close stops serving and frees every slab.
func (d *Donor) Close() error {
	d.mu.Lock()
	cancel := d.cancel
	d.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	_ = d.http.Close()
	_ = d.nbd.Close()
	d.wg.Wait()
	d.store.mu.Lock()
	for _, l := range d.store.leases {
		d.store.free(l)
	}
	d.store.mu.Unlock()
	return nil
}
