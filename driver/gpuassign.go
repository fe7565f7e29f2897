package driver

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/caravan-dl/caravan/driver/gpu"
	"github.com/caravan-dl/caravan/driver/ledger"
	"github.com/caravan-dl/caravan/driver/mps"
	"github.com/hashicorp/nomad/plugins/drivers"
)

// nvidiaVisibleDevices is the variable Nomad's nvidia device plugin sets
// for tasks that reserved whole GPUs with a device "nvidia/gpu" block.
const nvidiaVisibleDevices = "NVIDIA_VISIBLE_DEVICES"

// assignment is the GPU share a task holds and the environment that
// confines it there.
type assignment struct {
	grants  []ledger.Grant
	mpsGPUs []string
	env     map[string]string
}

// assignGPUs admits the task's GPU request. On error nothing stays held.
func (d *Driver) assignGPUs(n *nodeGPUs, cfg *drivers.TaskConfig, req gpuRequest, isolated bool) (assignment, error) {
	var a assignment
	var err error
	nvd := deviceGPUs(cfg)
	switch {
	case nvd != "":
		a, err = d.assignDeviceGPUs(n, cfg.ID, nvd, req, isolated)
	case req.None():
		// Hide every GPU: a task that did not ask for one must not use one
		// the ledger has given to someone else.
		a.env = map[string]string{"CUDA_VISIBLE_DEVICES": ""}
	case req.Whole > 0:
		a, err = d.assignWhole(n, cfg.ID, req)
	default:
		a, err = d.assignFraction(n, cfg.ID, req)
	}
	if err != nil {
		return assignment{}, err
	}
	for k, v := range caravanGPUEnv(n.inv.Backend(), a.grants) {
		a.env[k] = v
	}
	return a, nil
}

// deviceGPUs returns the GPUs Nomad's nvidia device plugin reserved for
// the task. Only the reservation (DeviceEnv) counts: a job's own env
// cannot name GPUs the ledger did not grant.
func deviceGPUs(cfg *drivers.TaskConfig) string {
	v := strings.TrimSpace(cfg.DeviceEnv[nvidiaVisibleDevices])
	if v == "void" || v == "none" {
		return ""
	}
	return v
}

// assignDeviceGPUs honours GPUs reserved through Nomad's device plugin. If
// they are GPUs this driver shares, they are recorded as whole grants so no
// fractional task lands on them. "all" means every GPU of the inventory,
// admitted whole like any other list; GPUs caravan does not know pass
// through only without isolation (an isolated task needs their nodes).
func (d *Driver) assignDeviceGPUs(n *nodeGPUs, taskID, nvd string, req gpuRequest, isolated bool) (assignment, error) {
	if !req.None() {
		return assignment{}, fmt.Errorf("gpus/gpu_fraction: the task already has GPUs %s from Nomad's nvidia device plugin; "+
			"use either a device \"nvidia/gpu\" block or caravan's gpus/gpu_fraction, not both", nvd)
	}
	uuids, err := n.expandDeviceList(nvd)
	if err != nil {
		return assignment{}, err
	}
	a := assignment{env: mps.WholeGPUEnv(strings.Join(uuids, ","))}
	for _, u := range uuids {
		if _, ok := n.device(u); !ok || n.ledger == nil {
			if isolated {
				return assignment{}, fmt.Errorf("NVIDIA_VISIBLE_DEVICES: GPU %q from Nomad's nvidia device plugin is not one caravan manages on this node, "+
					"so an isolated task cannot be given its device node", u)
			}
			return a, nil // not GPUs this driver manages: pass through
		}
	}
	grants, err := n.ledger.AdmitWhole(taskID, len(uuids), uuids)
	if err != nil {
		return assignment{}, fmt.Errorf("GPUs %s from Nomad's nvidia device plugin are already shared by caravan tasks: %w", nvd, err)
	}
	a.grants = grants
	d.changed.notify()
	return a, nil
}

// expandDeviceList splits a device-plugin GPU list; "all" becomes every
// GPU caravan knows, so it is checked against the ledger like a list.
func (n *nodeGPUs) expandDeviceList(nvd string) ([]string, error) {
	if strings.EqualFold(nvd, "all") {
		if len(n.devices) == 0 {
			return nil, fmt.Errorf("NVIDIA_VISIBLE_DEVICES: \"all\" cannot be checked against caravan's GPU ledger: this node has no GPUs caravan manages")
		}
		all := make([]string, len(n.devices))
		for i, dev := range n.devices {
			all[i] = dev.UUID
		}
		return all, nil
	}
	var out []string
	for _, u := range strings.Split(nvd, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("NVIDIA_VISIBLE_DEVICES: %q names no GPU", nvd)
	}
	return out, nil
}

func (d *Driver) assignWhole(n *nodeGPUs, taskID string, req gpuRequest) (assignment, error) {
	if err := n.usable(); err != nil {
		return assignment{}, err
	}
	grants, err := n.ledger.AdmitWhole(taskID, req.Whole, req.UUIDs)
	if err != nil {
		return assignment{}, fmt.Errorf("GPU admission: %w", err)
	}
	d.changed.notify()
	return assignment{grants: grants, env: mps.WholeGrantsEnv(grants)}, nil
}

func (d *Driver) assignFraction(n *nodeGPUs, taskID string, req gpuRequest) (assignment, error) {
	if err := n.usable(); err != nil {
		return assignment{}, err
	}
	lreq := ledger.Request{Fraction: req.Fraction, MemMiB: req.MemMiB}
	if len(req.UUIDs) == 1 {
		lreq.UUID = req.UUIDs[0]
	}
	grant, err := n.ledger.Admit(taskID, lreq)
	if err != nil {
		return assignment{}, fmt.Errorf("GPU admission: %w", err)
	}
	a := assignment{grants: []ledger.Grant{grant}}
	pipeDir := ""
	if n.mps != nil {
		pipeDir, err = n.mps.Acquire(grant.UUID)
		if err != nil {
			_ = n.ledger.Release(taskID)
			return assignment{}, fmt.Errorf("gpu_fraction: starting CUDA MPS for GPU %s: %w", grant.UUID, err)
		}
		a.mpsGPUs = []string{grant.UUID}
	}
	a.env = mps.TaskEnv(grant, pipeDir)
	d.changed.notify()
	return a, nil
}

// usable says why GPU requests cannot be served, if they cannot.
func (n *nodeGPUs) usable() error {
	if n.ledger == nil {
		return fmt.Errorf("caravan driver cannot grant GPUs: %s", n.healthDesc)
	}
	if len(n.devices) == 0 {
		return fmt.Errorf("this node has no GPUs for caravan to grant: %s", n.inv.Message())
	}
	return nil
}

// releaseGrants frees a task's ledger grant and MPS references.
func (d *Driver) releaseGrants(n *nodeGPUs, taskID string, mpsGPUs []string) {
	if n.ledger != nil {
		if err := n.ledger.Release(taskID); err != nil {
			d.logger.Error("releasing GPU grant", "task_id", taskID, "error", err)
		}
	}
	for _, u := range mpsGPUs {
		if n.mps == nil {
			break
		}
		if err := n.mps.Release(u); err != nil {
			d.logger.Error("releasing MPS reference", "task_id", taskID, "gpu", u, "error", err)
		}
	}
	d.changed.notify()
}

// caravanGPUEnv tells the task what it got, in caravan's own variables.
func caravanGPUEnv(backend string, grants []ledger.Grant) map[string]string {
	fraction, mem := 0.0, uint64(0)
	if len(grants) > 0 {
		fraction = grants[0].Fraction
	}
	for _, g := range grants {
		mem += g.MemMiB
	}
	if backend == "" {
		backend = gpu.BackendNone
	}
	return map[string]string{
		"CARAVAN_GPU_BACKEND":    backend,
		"CARAVAN_GPU_FRACTION":   formatFraction(fraction),
		"CARAVAN_GPU_COUNT":      strconv.Itoa(len(grants)),
		"CARAVAN_GPU_UUIDS":      strings.Join(grantUUIDs(grants), ","),
		"CARAVAN_GPU_MEMORY_MIB": strconv.FormatUint(mem, 10),
	}
}
