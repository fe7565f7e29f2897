package serve

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/hashicorp/go-hclog"
)

// DefaultWorkerService is the Consul service model workers register as,
// tagged with the model they serve.
const DefaultWorkerService = "caravan-serve-worker"

// Discovery follows the model workers registered in Consul: one blocking
// query per model on the passing instances of Service tagged with the model
// name, pushing every change to the front end.
type Discovery struct {
	Consul      *api.Client
	Service     string // default DefaultWorkerService
	WorkerToken string // bearer token the workers expect
	Logger      hclog.Logger
	// Wait is the blocking query's longest wait (default 30s).
	Wait time.Duration
}

// Run watches every model of f until ctx ends.
func (d *Discovery) Run(ctx context.Context, f *Frontend) {
	if d.Service == "" {
		d.Service = DefaultWorkerService
	}
	if d.Logger == nil {
		d.Logger = hclog.NewNullLogger()
	}
	if d.Wait <= 0 {
		d.Wait = 30 * time.Second
	}
	for _, m := range f.Models() {
		go d.watch(ctx, f, m)
	}
	<-ctx.Done()
}

func (d *Discovery) watch(ctx context.Context, f *Frontend, model string) {
	var index uint64
	var last []string
	workers := map[string]Worker{}
	for ctx.Err() == nil {
		opts := (&api.QueryOptions{WaitIndex: index, WaitTime: d.Wait}).WithContext(ctx)
		entries, meta, err := d.Consul.Health().Service(d.Service, model, true, opts)
		if err != nil {
			if ctx.Err() == nil {
				d.Logger.Warn("consul: listing workers failed; retrying", "model", model, "error", err)
				sleepCtx(ctx, time.Second)
			}
			continue
		}
		if meta.LastIndex < index { // Consul's index reset: start over
			index = 0
		} else {
			index = meta.LastIndex
		}
		addrs := workerAddrs(entries)
		if slices.Equal(addrs, last) {
			continue
		}
		last = addrs
		ws := make([]Worker, 0, len(addrs))
		for _, a := range addrs {
			if workers[a] == nil {
				workers[a] = NewHTTPWorker(a, d.WorkerToken, nil)
			}
			ws = append(ws, workers[a])
		}
		d.Logger.Info("workers changed", "model", model, "workers", addrs)
		if err := f.SetWorkers(model, ws); err != nil {
			return // the front end stopped
		}
	}
}

// workerAddrs are the instances' host:port, sorted; the service address,
// else the node's.
func workerAddrs(entries []*api.ServiceEntry) []string {
	var out []string
	for _, e := range entries {
		host := e.Service.Address
		if host == "" {
			host = e.Node.Address
		}
		if host == "" || e.Service.Port <= 0 {
			continue
		}
		out = append(out, net.JoinHostPort(host, strconv.Itoa(e.Service.Port)))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// String describes the watch for logs.
func (d *Discovery) String() string { return fmt.Sprintf("consul service %q", d.Service) }
