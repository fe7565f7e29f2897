package ledger

import (
	"errors"
	"fmt"
	"strings"

	"github.com/caravan-dl/caravan/driver/gpu"
)

// AdmitWhole grants count whole GPUs (fraction 1, all memory) on GPUs that
// nothing is granted on. With pinned UUIDs, exactly those GPUs are taken
// (count 0 means len(pinned)). A task that already holds grants gets them back.
func (l *Ledger) AdmitWhole(taskID string, count int, pinned []string) ([]Grant, error) {
	if taskID == "" {
		return nil, errors.New("ledger: empty task ID")
	}
	if count == 0 {
		count = len(pinned)
	}
	if count < 1 {
		return nil, fmt.Errorf("gpus %d must be at least 1", count)
	}
	if len(pinned) > 0 && len(pinned) != count {
		return nil, fmt.Errorf("gpus = %d but gpu_uuids lists %d GPUs", count, len(pinned))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if held := l.grants[taskID]; len(held) > 0 {
		return append([]Grant(nil), held...), nil
	}
	devs, err := l.pickWhole(count, pinned)
	if err != nil {
		return nil, err
	}
	grants := make([]Grant, 0, len(devs))
	for _, d := range devs {
		grants = append(grants, Grant{TaskID: taskID, UUID: d.UUID, Index: d.Index, Fraction: 1, MemMiB: d.MemoryMiB})
	}
	l.grants[taskID] = grants
	if err := l.saveLocked(); err != nil {
		delete(l.grants, taskID)
		return nil, err
	}
	return append([]Grant(nil), grants...), nil
}

func (l *Ledger) pickWhole(count int, pinned []string) ([]gpu.Device, error) {
	if len(pinned) > 0 {
		return l.pickPinnedWhole(pinned)
	}
	if count > len(l.devices) {
		return nil, fmt.Errorf("gpus = %d but this node has %d GPUs", count, len(l.devices))
	}
	var free []gpu.Device
	for _, d := range l.devices {
		if l.usageLocked(d).Tasks == 0 {
			free = append(free, d)
		}
	}
	if len(free) < count {
		return nil, fmt.Errorf("gpus = %d does not fit: only %d of %d GPUs are wholly free%s",
			count, len(free), len(l.devices), listIndexes(free))
	}
	return free[:count], nil
}

func (l *Ledger) pickPinnedWhole(pinned []string) ([]gpu.Device, error) {
	seen := map[string]bool{}
	for _, uuid := range pinned {
		if seen[uuid] {
			return nil, fmt.Errorf("gpu_uuids lists GPU %s twice", uuid)
		}
		seen[uuid] = true
	}
	devs := make([]gpu.Device, 0, len(pinned))
	for _, uuid := range pinned {
		d, ok := l.byUUID[uuid]
		if !ok {
			return nil, fmt.Errorf("GPU %s (gpu_uuids) is not on this node", uuid)
		}
		if u := l.usageLocked(d); u.Tasks > 0 {
			return nil, fmt.Errorf("GPU %d (%s) is not wholly free: %s of it is granted to %d task(s)",
				d.Index, d.UUID, fmtFrac(u.UsedFraction), u.Tasks)
		}
		devs = append(devs, d)
	}
	return devs, nil
}

func listIndexes(devs []gpu.Device) string {
	if len(devs) == 0 {
		return ""
	}
	ids := make([]string, len(devs))
	for i, d := range devs {
		ids[i] = fmt.Sprint(d.Index)
	}
	return " (GPU " + strings.Join(ids, ", ") + ")"
}
