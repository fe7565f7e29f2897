package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/caravan-dl/caravan/memshare/consumer"
	"github.com/prometheus/client_golang/prometheus"
)

// Recovery: a restarted plugin (Nomad restarts plugins, and a client
// agent restart restarts them too) re-attaches running tasks in
// RecoverTask. A consumer task's volume is re-opened from its saved
// layout on the same leases and served at the same URI; a donor task is
// watched and lent again. This node's own donor restarts empty (its slabs
// lived in the old process), so consumers rebuild what it held from
// parity, as for any dead donor.

// memshareTaskState is the memshare part of a task's driver state.
type memshareTaskState struct {
	Version int
	// Endpoint is set for a remote_memory task.
	Endpoint *endpointState
	// Donor is set for a donor task; DonorLimit is donate_memory (0: none).
	Donor      bool
	DonorLimit int64
}

// endpointState is where a task's remote memory is served and saved.
type endpointState struct {
	Addr   string // loopback host:port
	Export string // the secret export name
	Size   uint64
	Layout string // the saved layout file
}

const memshareStateVersion = 1

// memshareState is what a task's handle keeps for recovery (nil: none).
func (d *Driver) memshareState(taskID string, tc *TaskConfig) *memshareTaskState {
	ms := &memshareTaskState{Version: memshareStateVersion, Endpoint: d.mem.attachment(taskID)}
	if tc.MemoryDonor || tc.DonateMemory != "" {
		ms.Donor, ms.DonorLimit = true, donateLimit(tc)
	}
	if ms.Endpoint == nil && !ms.Donor {
		return nil
	}
	return ms
}

// recoverMemshare re-attaches a recovered task's remote memory and
// lending. Failures are reported as task events; the task keeps running
// (a consumer whose memory could not be re-opened gets I/O errors, never
// wrong data).
func (d *Driver) recoverMemshare(state taskState, h *taskHandle) {
	cfg := state.TaskConfig
	ctx := d.detachOnRelease(cfg.ID, h)
	ms := state.Memshare
	if ms == nil {
		return
	}
	if ms.Version != memshareStateVersion {
		d.emit(cfg, fmt.Sprintf("remote memory not recovered: driver state version %d, this plugin reads %d", ms.Version, memshareStateVersion), nil)
		return
	}
	d.linkGossip()
	if ms.Endpoint != nil {
		octx, ocancel := context.WithTimeout(ctx, consumerOpenTimeout)
		err := d.mem.reattach(octx, cfg.ID, cfg.AllocID+"/"+cfg.Name, ms.Endpoint)
		ocancel()
		if err != nil {
			h.logger.Error("remote memory not recovered", "error", err)
			d.emit(cfg, "remote memory not recovered: "+err.Error(), nil)
		}
	}
	if ms.Donor {
		if err := d.mem.watchDonor(ctx, cfg.ID, cfg, ms.DonorLimit, h.pid, h.exec); err != nil {
			h.logger.Warn("recovered memory donor lends nothing", "error", err)
		}
	}
}

// reattach re-opens a task's volume from its saved layout and serves it
// where it was served. The geometry (k, r, layout, slab size) is the
// saved one; key, TLS and donors are the current config's.
func (n *memshareNode) reattach(ctx context.Context, taskID, owner string, es *endpointState) error {
	set, view, reg := n.consumerSetup()
	if set == nil {
		return errNoMemshare
	}
	l, err := readLayout(es.Layout, set.key, taskID)
	if err != nil {
		return fmt.Errorf("saved layout: %w", err)
	}
	tr := newTrackingRegisterer(prometheus.WrapRegistererWith(prometheus.Labels{"task": owner}, reg))
	vol, err := consumer.Reopen(ctx, consumer.Config{
		ID: owner, Size: es.Size, DataShards: l.DataShards, ParityShards: l.ParityShards, Layout: l.Layout,
		SlabSize: l.SlabSize, Donors: view, Key: set.key, TLS: set.clientTLS,
		Logger: n.logger.With("task", owner), Registry: tr,
	}, l)
	if err != nil {
		tr.unregisterAll()
		return err
	}
	if _, err := n.serve(vol, taskID, owner, es.Layout, es, tr); err != nil {
		// Unreachable memory is no use to the task: give it back.
		vol.Close()
		return err
	}
	n.logger.Info("remote memory recovered", "task", owner, "uri_addr", es.Addr)
	return nil
}

// abandonAll stops serving every endpoint without giving leases back or
// removing saved layouts, as a plugin that dies does (tests use it to
// stand for a crash).
func (n *memshareNode) abandonAll() {
	n.mu.Lock()
	as := n.attached
	n.attached = map[string]*remoteAttachment{}
	n.mu.Unlock()
	for _, a := range as {
		_ = a.ep.Close()
		close(a.stop)
		a.saver.finish(false)
		a.vol.Abandon()
		a.unreg()
	}
}

// dropMemshare forgets the saved layout of a task that is gone (its
// leases expire unrenewed).
func dropMemshare(state taskState) {
	ms := state.Memshare
	if ms == nil || ms.Endpoint == nil {
		return
	}
	// Only ever a file of ours: <state_dir>/memshare/<task id>.layout.
	if p := ms.Endpoint.Layout; filepath.Base(p) == state.TaskConfig.ID+".layout" && filepath.Base(filepath.Dir(p)) == "memshare" {
		_ = os.Remove(p)
	}
}
