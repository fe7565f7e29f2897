package driver

import (
	"time"
)

// orphanGrace is how long after configuration the driver waits for Nomad
// to recover its running tasks before it frees grants no task claims.
// Nomad recovers tasks right after the plugin starts, so this is generous.
const orphanGrace = 2 * time.Minute

// sweepOrphansAfter frees, once grace has passed, the ledger grants of
// tasks that were not recovered: after a node reboot or an allocation
// removed while the client was down, nothing else would ever free them.
func (d *Driver) sweepOrphansAfter(node *nodeGPUs, grace time.Duration) {
	select {
	case <-d.ctx.Done():
		return
	case <-time.After(grace):
	}
	d.sweepOrphans(node)
}

func (d *Driver) sweepOrphans(node *nodeGPUs) {
	if node.ledger == nil {
		return
	}
	// Block StartTask so a grant admitted but not yet tracked is not taken.
	d.admitMu.Lock()
	defer d.admitMu.Unlock()
	released := false
	for _, g := range node.ledger.All() {
		if _, ok := d.tasks.get(g.TaskID); ok || len(node.ledger.Grants(g.TaskID)) == 0 {
			continue
		}
		d.logger.Warn("releasing GPU grant of a task that was not recovered", "task_id", g.TaskID, "gpu", g.UUID)
		if err := node.ledger.Release(g.TaskID); err != nil {
			d.logger.Error("releasing orphaned GPU grant", "task_id", g.TaskID, "error", err)
		}
		released = true
	}
	if released {
		d.changed.notify()
	}
}
