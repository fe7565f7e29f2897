package driver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/consumer"
	"github.com/caravan-dl/caravan/memshare/donor"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
)

// memshareNode is this plugin's share of memshare: a donor server lending
// what donor tasks reserved but do not use, and the consumer endpoints of
// tasks with remote_memory. The lent slabs live in this process, outside
// every task's cgroup, so lending never brings a donor task nearer its
// own memory limit.
type memshareNode struct {
	mu       sync.Mutex
	raw      *MemshareConfig
	set      *memshareSettings
	view     *memshare.StaticDonors
	donor    *donor.Donor
	budget   *donorBudget
	reg      *prometheus.Registry
	attached map[string]*remoteAttachment
	logger   hclog.Logger

	gossipOnce   sync.Once
	gossipDonors *memshare.GossipDonors // set by linkGossip
	gossipSelf   func() string          // this node's gossip name
}

// configure applies a memshare block (nil: memshare stays off).
func (n *memshareNode) configure(raw *MemshareConfig, logger hclog.Logger) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if raw == nil || reflect.DeepEqual(raw, n.raw) {
		return nil
	}
	set, err := raw.settings()
	if err != nil {
		return err
	}
	if n.donor != nil {
		_ = n.donor.Close()
		n.donor = nil
	}
	n.logger = logger.Named("memshare")
	if n.budget == nil {
		n.budget = newDonorBudget()
	}
	n.budget.setHeadroom(set.headroom)
	if n.reg == nil {
		n.reg = prometheus.NewRegistry()
	}
	if n.attached == nil {
		n.attached = map[string]*remoteAttachment{}
	}
	if set.nbdAddr != "" {
		if err := n.startDonor(set); err != nil {
			return err
		}
	}
	donors := set.donors
	if n.donor != nil && !hasNode(donors, set.node) {
		donors = append(donors, n.donor.Info())
	}
	if n.view, err = memshare.NewStaticDonors(donors); err != nil {
		return err
	}
	n.raw, n.set = raw, set
	return nil
}

func (n *memshareNode) startDonor(set *memshareSettings) error {
	d, err := donor.New(donor.Config{
		Node: set.node, Key: set.key, SlabSize: set.slabSize,
		Capacity: n.budget.capacity, Logger: n.logger, Registry: n.reg,
		TLS: set.serverTLS, RequireTLS: set.serverTLS != nil,
	})
	if err != nil {
		return fmt.Errorf("memshare: %w", err)
	}
	nl, err := listenRetry(set.nbdAddr)
	if err != nil {
		return fmt.Errorf("memshare.nbd_addr: %w", err)
	}
	al, err := listenRetry(set.apiAddr)
	if err != nil {
		nl.Close()
		return fmt.Errorf("memshare.api_addr: %w", err)
	}
	d.Start(nl, al)
	n.donor = d
	n.logger.Info("lending donor tasks' unused memory", "nbd", nl.Addr(), "api", al.Addr())
	return nil
}

// listenRetry binds addr, waiting up to 5 s while it is in use: Nomad's
// plugin loader runs a short-lived instance of this plugin (SetConfig
// included) just before the real one, and its ports may linger a moment.
func listenRetry(addr string) (net.Listener, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return ln, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func hasNode(ds []memshare.DonorInfo, node string) bool {
	for _, d := range ds {
		if d.Node == node {
			return true
		}
	}
	return false
}

// remoteAttachment is one task's consumer endpoint.
type remoteAttachment struct {
	vol   *consumer.Volume
	ep    *memEndpoint
	saver *layoutSaver
	stop  chan struct{} // ends the saver's loop
	unreg func()
}

// state is what the task's driver state keeps for RecoverTask.
func (a *remoteAttachment) state() *endpointState {
	return &endpointState{Addr: a.ep.addr(), Export: a.ep.name, Size: a.vol.Size(), Layout: a.saver.path}
}

// errNoMemshare explains a remote_memory or donor task on a node without
// a memshare block.
var errNoMemshare = errors.New("the caravan plugin config has no memshare block (key and donors), so this node can neither lend nor borrow memory")

// attach leases remote memory for a task and serves it on loopback.
func (n *memshareNode) attach(ctx context.Context, taskID, owner, stateDir string, req remoteMemRequest) (map[string]string, error) {
	set, view, reg := n.consumerSetup()
	if set == nil {
		return nil, fmt.Errorf("remote_memory: %w", errNoMemshare)
	}
	if req.Mode == remoteModeSwap {
		return nil, swapUnavailable()
	}
	tr := newTrackingRegisterer(prometheus.WrapRegistererWith(prometheus.Labels{"task": owner}, reg))
	vol, err := consumer.Open(ctx, consumer.Config{
		ID: owner, Size: req.Bytes, DataShards: set.dataShards, ParityShards: set.parityShards, Layout: set.layout,
		SlabSize: set.slabSize, Donors: view, Key: set.key, TLS: set.clientTLS,
		Logger: n.logger.With("task", owner), Registry: tr,
	})
	if err != nil {
		tr.unregisterAll()
		return nil, fmt.Errorf("remote_memory: %w", err)
	}
	a, err := n.serve(vol, taskID, owner, layoutPath(stateDir, taskID), &endpointState{}, tr)
	if err != nil {
		vol.Close()
		return nil, err
	}
	return map[string]string{
		"CARAVAN_REMOTE_MEMORY_URI":  a.ep.uri(),
		"CARAVAN_REMOTE_MEMORY_SIZE": strconv.FormatUint(vol.Size(), 10),
	}, nil
}

// consumerSetup is the settings, donor view and registry consumers use.
func (n *memshareNode) consumerSetup() (*memshareSettings, memshare.DonorSource, *prometheus.Registry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var view memshare.DonorSource = n.view
	if n.gossipDonors != nil {
		view = donorView{static: n.view, gossip: n.gossipDonors, self: n.gossipSelf()}
	}
	return n.set, view, n.reg
}

// serve saves vol's layout to path and serves it at the endpoint es
// names (a new one when es is empty), and records the attachment.
func (n *memshareNode) serve(vol *consumer.Volume, taskID, owner, path string, es *endpointState, tr *trackingRegisterer) (*remoteAttachment, error) {
	n.mu.Lock()
	key := n.set.key
	n.mu.Unlock()
	saver := &layoutSaver{vol: vol, path: path, key: key, task: taskID, logger: n.logger.With("task", owner)}
	saver.save()
	ep, err := serveEndpoint(savingExport{Volume: vol, saver: saver}, es.Addr, es.Export, n.logger.With("task", owner), tr)
	if err != nil {
		_ = os.Remove(saver.path)
		tr.unregisterAll()
		return nil, fmt.Errorf("remote_memory: %w", err)
	}
	a := &remoteAttachment{vol: vol, ep: ep, saver: saver, stop: make(chan struct{}), unreg: tr.unregisterAll}
	go saver.loop(a.stop)
	n.mu.Lock()
	n.attached[taskID] = a
	n.mu.Unlock()
	return a, nil
}

// attachment returns a task's endpoint state, or nil.
func (n *memshareNode) attachment(taskID string) *endpointState {
	n.mu.Lock()
	a := n.attached[taskID]
	n.mu.Unlock()
	if a == nil {
		return nil
	}
	return a.state()
}

// detach closes a task's endpoint, gives its leases back and removes its
// saved layout.
func (n *memshareNode) detach(taskID string) {
	n.mu.Lock()
	a := n.attached[taskID]
	delete(n.attached, taskID)
	n.mu.Unlock()
	if a != nil {
		_ = a.ep.Close()
		close(a.stop)
		a.saver.finish(true)
		_ = a.vol.Close()
		a.unreg()
	}
}

// swapUnavailable explains why swap mode cannot attach here.
func swapUnavailable() error {
	if _, err := os.Stat("/sys/module/nbd"); err != nil {
		return errors.New(`remote_memory_mode: "swap" needs the kernel nbd module, and this host has none (/sys/module/nbd is missing); ` +
			`use remote_memory_mode = "block" (the default) and open CARAVAN_REMOTE_MEMORY_URI with libnbd, qemu or nbd-client`)
	}
	return errors.New(`remote_memory_mode: "swap" is not supported by this driver yet: Linux swap is node-wide, not per task; ` +
		`use remote_memory_mode = "block" (the default) and open CARAVAN_REMOTE_MEMORY_URI`)
}

// trackingRegisterer remembers what a task registered so detach can
// unregister it from the process registry.
type trackingRegisterer struct {
	inner prometheus.Registerer
	mu    sync.Mutex
	cs    []prometheus.Collector
}

func newTrackingRegisterer(r prometheus.Registerer) *trackingRegisterer {
	return &trackingRegisterer{inner: r}
}

func (t *trackingRegisterer) Register(c prometheus.Collector) error {
	if err := t.inner.Register(c); err != nil {
		return err
	}
	t.mu.Lock()
	t.cs = append(t.cs, c)
	t.mu.Unlock()
	return nil
}

func (t *trackingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := t.Register(c); err != nil {
			panic(err)
		}
	}
}

func (t *trackingRegisterer) Unregister(c prometheus.Collector) bool { return t.inner.Unregister(c) }

func (t *trackingRegisterer) unregisterAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.cs {
		t.inner.Unregister(c)
	}
	t.cs = nil
}
