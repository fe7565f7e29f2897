package driver

import (
	"fmt"

	"github.com/caravan-dl/caravan/driver/ledger"
	"github.com/hashicorp/nomad/drivers/shared/executor"
	"github.com/hashicorp/nomad/plugins/drivers"
	pstructs "github.com/hashicorp/nomad/plugins/shared/structs"
)

// RecoverTask reattaches to a task's executor after the plugin or the
// Nomad client restarted, so the task keeps running and is waited on, and
// re-adopts its GPU grant and MPS references.
func (d *Driver) RecoverTask(handle *drivers.TaskHandle) error {
	if handle == nil || handle.Config == nil {
		return fmt.Errorf("recover: handle cannot be nil")
	}
	d.admitMu.RLock()
	defer d.admitMu.RUnlock()
	if _, ok := d.tasks.get(handle.Config.ID); ok {
		return nil
	}
	node, _, err := d.gpus()
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	var state taskState
	if err := handle.GetDriverState(&state); err != nil {
		return fmt.Errorf("recover: decoding task state: %v", err)
	}
	if state.TaskConfig == nil {
		state.TaskConfig = handle.Config
	}
	rc, err := pstructs.ReattachConfigToGoPlugin(state.ReattachConfig)
	if err != nil {
		return fmt.Errorf("recover: building reattach config: %v", err)
	}
	logger := d.logger.With("task_name", handle.Config.Name, "alloc_id", handle.Config.AllocID)
	exec, client, err := executor.ReattachToExecutor(rc, logger, d.driverConfig().Topology.Compute())
	if err != nil {
		// The executor is gone, so is the task: Nomad will restart it under
		// a new task ID, and the old grant would otherwise never be freed.
		d.releaseGrants(node, state.TaskConfig.ID, nil)
		dropMemshare(state)
		return fmt.Errorf("recover: reattaching to executor: %v", err)
	}
	if err := d.readopt(node, state); err != nil {
		logger.Warn("task recovered without its GPU grant", "error", err)
	}
	h := &taskHandle{
		exec:          exec,
		pluginClient:  client,
		pid:           state.Pid,
		logger:        logger,
		taskConfig:    state.TaskConfig,
		grants:        state.Grants,
		mpsGPUs:       state.MPSGPUs,
		startedAt:     state.StartedAt,
		checkpointDir: state.CheckpointDir,
		procState:     drivers.TaskStateRunning,
		exitResult:    &drivers.ExitResult{},
		doneCh:        make(chan struct{}),
	}
	id, mpsGPUs := state.TaskConfig.ID, state.MPSGPUs
	h.release = func() { d.releaseGrants(node, id, mpsGPUs) }
	d.recoverMemshare(state, h)
	d.tasks.set(id, h)
	go h.run(d.ctx)
	return nil
}

// readopt makes sure the ledger holds the task's grants (it normally does,
// being persisted) and re-counts its MPS references.
func (d *Driver) readopt(node *nodeGPUs, state taskState) error {
	if len(state.Grants) == 0 {
		return nil
	}
	if node.ledger == nil {
		return fmt.Errorf("no ledger: %s", node.healthDesc)
	}
	id := state.TaskConfig.ID
	if len(node.ledger.Grants(id)) == 0 {
		if err := readmit(node.ledger, id, state.Grants); err != nil {
			return err
		}
		d.changed.notify()
	}
	for _, u := range state.MPSGPUs {
		if node.mps == nil {
			break
		}
		if err := node.mps.Adopt(u); err != nil {
			return fmt.Errorf("re-adopting MPS for GPU %s: %w", u, err)
		}
	}
	return nil
}

// readmit restores grants the ledger lost (e.g. its file was removed).
func readmit(l *ledger.Ledger, taskID string, grants []ledger.Grant) error {
	if len(grants) == 1 && grants[0].Fraction < 1 {
		g := grants[0]
		_, err := l.Admit(taskID, ledger.Request{Fraction: g.Fraction, MemMiB: g.MemMiB, UUID: g.UUID})
		return err
	}
	_, err := l.AdmitWhole(taskID, len(grants), grantUUIDs(grants))
	return err
}
