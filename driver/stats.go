package driver

import (
	"context"
	"time"

	"github.com/caravan-dl/caravan/driver/gpu"
	"github.com/hashicorp/nomad/plugins/device"
	"github.com/hashicorp/nomad/plugins/drivers"
	pstructs "github.com/hashicorp/nomad/plugins/shared/structs"
)

// TaskStats relays the executor's CPU and memory stats and adds the
// task's GPUs as a device group. (Nomad's driver RPC does not carry
// DeviceStats yet, so across the plugin boundary only CPU/memory arrive.)
func (d *Driver) TaskStats(ctx context.Context, taskID string, interval time.Duration) (<-chan *drivers.TaskResourceUsage, error) {
	h, ok := d.tasks.get(taskID)
	if !ok {
		return nil, drivers.ErrTaskNotFound
	}
	in, err := h.exec.Stats(ctx, interval)
	if err != nil {
		return nil, err
	}
	node, _, err := d.gpus()
	if err != nil || len(h.grants) == 0 {
		return in, nil
	}
	out := make(chan *drivers.TaskResourceUsage)
	go func() {
		defer close(out)
		for usage := range in {
			if usage != nil && usage.ResourceUsage != nil {
				usage.ResourceUsage.DeviceStats = append(usage.ResourceUsage.DeviceStats, gpuStats(node.inv, h))
			}
			select {
			case out <- usage:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// gpuStats reads the inventory for each GPU the task holds. A GPU whose
// stats fail is left out rather than failing the whole sample.
func gpuStats(inv gpu.Inventory, h *taskHandle) *device.DeviceGroupStats {
	group := &device.DeviceGroupStats{
		Vendor:        "nvidia",
		Type:          "gpu",
		Name:          inv.Backend(),
		InstanceStats: map[string]*device.DeviceStats{},
	}
	now := time.Now()
	for _, g := range h.grants {
		s, err := inv.Stats(g.UUID)
		if err != nil {
			h.logger.Debug("reading GPU stats", "gpu", g.UUID, "error", err)
			continue
		}
		util := s.UtilPercent
		used, total := int64(s.MemoryUsedMiB), int64(s.MemoryTotalMiB)
		group.InstanceStats[g.UUID] = &device.DeviceStats{
			Summary: &pstructs.StatValue{FloatNumeratorVal: &util, Unit: "%", Desc: "GPU utilization"},
			Stats: &pstructs.StatObject{Attributes: map[string]*pstructs.StatValue{
				"utilization":      {FloatNumeratorVal: &util, Unit: "%"},
				"memory_used":      {IntNumeratorVal: &used, IntDenominatorVal: &total, Unit: "MiB"},
				"granted_fraction": {FloatNumeratorVal: &g.Fraction},
			}},
			Timestamp: now,
		}
	}
	return group
}
