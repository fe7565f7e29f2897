package driver

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/nomad/plugins/drivers"
)

// emitGrantEvent tells the user, in the task's events, which GPU share the
// task got.
func (d *Driver) emitGrantEvent(cfg *drivers.TaskConfig, a assignment) {
	if len(a.grants) == 0 {
		return
	}
	var parts []string
	for _, g := range a.grants {
		parts = append(parts, fmt.Sprintf("%s of GPU %d (%s, %d MiB)", formatFraction(g.Fraction), g.Index, g.UUID, g.MemMiB))
	}
	d.emit(cfg, "Caravan granted "+strings.Join(parts, "; "), map[string]string{
		"gpu_uuids": strings.Join(grantUUIDs(a.grants), ","),
	})
}

func (d *Driver) emit(cfg *drivers.TaskConfig, msg string, annotations map[string]string) {
	err := d.eventer.EmitEvent(&drivers.TaskEvent{
		TaskID:      cfg.ID,
		TaskName:    cfg.Name,
		AllocID:     cfg.AllocID,
		Timestamp:   time.Now(),
		Message:     msg,
		Annotations: annotations,
	})
	if err != nil {
		d.logger.Debug("emitting task event", "error", err)
	}
}
