package driver

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/consul-template/signals"
	"github.com/hashicorp/nomad/plugins/drivers"
)

func (d *Driver) WaitTask(ctx context.Context, taskID string) (<-chan *drivers.ExitResult, error) {
	h, ok := d.tasks.get(taskID)
	if !ok {
		return nil, drivers.ErrTaskNotFound
	}
	ch := make(chan *drivers.ExitResult)
	go d.handleWait(ctx, h, ch)
	return ch, nil
}

// handleWait reports the exit recorded by the handle's run loop, so every
// waiter sees the same result and only one goroutine talks to the executor.
func (d *Driver) handleWait(ctx context.Context, h *taskHandle, ch chan<- *drivers.ExitResult) {
	defer close(ch)
	select {
	case <-ctx.Done():
		return
	case <-d.ctx.Done():
		return
	case <-h.doneCh:
	}
	h.mu.RLock()
	result := h.exitResult.Copy()
	h.mu.RUnlock()
	select {
	case <-ctx.Done():
	case <-d.ctx.Done():
	case ch <- result:
	}
}

// StopTask sends the stop signal and kills the task after timeout; the
// grace period is what lets a preempted task checkpoint.
func (d *Driver) StopTask(taskID string, timeout time.Duration, signal string) error {
	h, ok := d.tasks.get(taskID)
	if !ok {
		return drivers.ErrTaskNotFound
	}
	h.stopRequested.Store(true)
	if err := h.exec.Shutdown(signal, timeout); err != nil {
		if h.pluginClient.Exited() {
			return nil
		}
		return fmt.Errorf("executor Shutdown failed: %v", err)
	}
	<-h.doneCh
	h.pluginClient.Kill()
	return nil
}

// DestroyTask forgets the task, killing it first if force is set, and
// frees its GPU share whatever state it is in.
func (d *Driver) DestroyTask(taskID string, force bool) error {
	h, ok := d.tasks.get(taskID)
	if !ok {
		return drivers.ErrTaskNotFound
	}
	if h.running() && !force {
		return fmt.Errorf("cannot destroy running task")
	}
	if !h.pluginClient.Exited() {
		h.stopRequested.Store(true)
		if err := h.exec.Shutdown("", 0); err != nil {
			h.logger.Error("destroying executor failed", "error", err)
		}
		h.pluginClient.Kill()
	}
	h.releaseGPUs()
	d.tasks.delete(taskID)
	return nil
}

func (d *Driver) InspectTask(taskID string) (*drivers.TaskStatus, error) {
	h, ok := d.tasks.get(taskID)
	if !ok {
		return nil, drivers.ErrTaskNotFound
	}
	return h.status(), nil
}

func (d *Driver) TaskEvents(ctx context.Context) (<-chan *drivers.TaskEvent, error) {
	return d.eventer.TaskEvents(ctx)
}

func (d *Driver) SignalTask(taskID string, signal string) error {
	h, ok := d.tasks.get(taskID)
	if !ok {
		return drivers.ErrTaskNotFound
	}
	sig, ok := signals.SignalLookup[signal]
	if !ok {
		return fmt.Errorf("unknown signal %q", signal)
	}
	if sig == nil {
		sig = os.Interrupt
	}
	return h.exec.Signal(sig)
}
