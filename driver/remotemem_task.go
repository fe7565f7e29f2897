package driver

import (
	"context"
	"time"

	"github.com/caravan-dl/caravan/driver/taskspec"
	"github.com/hashicorp/nomad/plugins/drivers"
)

// consumerOpenTimeout bounds leasing every slab of a task at start.
const consumerOpenTimeout = 30 * time.Second

// remoteMemRequest is a validated remote_memory ask.
type remoteMemRequest struct {
	Bytes uint64
	Mode  string
}

// Remote memory modes.
const (
	remoteModeBlock = "block"
	remoteModeSwap  = "swap"
)

// attachRemoteMemory leases remote memory for a task that asked for it and
// returns the environment that points the task at its endpoint.
func (d *Driver) attachRemoteMemory(cfg *drivers.TaskConfig, tc *TaskConfig) (map[string]string, error) {
	if tc.RemoteMemory == "" {
		return nil, nil
	}
	mib, err := taskspec.ParseMiB(tc.RemoteMemory)
	if err != nil {
		return nil, err
	}
	req := remoteMemRequest{Bytes: mib << 20, Mode: remoteModeBlock}
	if tc.RemoteMemoryMode != "" {
		req.Mode = tc.RemoteMemoryMode
	}
	d.linkGossip()
	ctx, cancel := context.WithTimeout(d.ctx, consumerOpenTimeout)
	defer cancel()
	d.mu.RLock()
	stateDir := d.config.StateDir
	d.mu.RUnlock()
	return d.mem.attach(ctx, cfg.ID, cfg.AllocID+"/"+cfg.Name, stateDir, req)
}

// detachOnRelease returns a context that ends, with the task's remote
// memory and lending, when the task's handle is released.
func (d *Driver) detachOnRelease(taskID string, h *taskHandle) context.Context {
	ctx, cancel := context.WithCancel(d.ctx)
	release := h.release
	h.release = func() {
		cancel()
		d.mem.detach(taskID)
		if release != nil {
			release()
		}
	}
	return ctx
}

// lendDonorMemory registers a donor task so its unused reservation is
// lent, and wraps its release so the lending and any endpoint stop with
// the task.
func (d *Driver) lendDonorMemory(cfg *drivers.TaskConfig, tc *TaskConfig, h *taskHandle) {
	ctx := d.detachOnRelease(cfg.ID, h)
	if !tc.MemoryDonor && tc.DonateMemory == "" {
		return
	}
	d.linkGossip()
	if err := d.mem.watchDonor(ctx, cfg.ID, cfg, donateLimit(tc), h.pid, h.exec); err != nil {
		// The donor task runs all the same; it just lends nothing.
		h.logger.Warn("memory donor lends nothing", "error", err)
		d.emit(cfg, "memory donor lends nothing: "+err.Error(), nil)
	}
}

// donateLimit is donate_memory in bytes (0: no cap).
func donateLimit(tc *TaskConfig) int64 {
	if tc.DonateMemory == "" {
		return 0
	}
	mib, _ := taskspec.ParseMiB(tc.DonateMemory) // validated by parse
	return int64(mib) << 20
}
