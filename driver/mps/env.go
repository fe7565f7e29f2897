package mps

import (
	"math"
	"strconv"
	"strings"

	"github.com/caravan-dl/caravan/driver/ledger"
)

// TaskEnv confines a task to its fractional grant: it sees only its GPU
// (as device 0), gets a share of its SMs and a pinned memory limit, and
// talks to the GPU's MPS daemon when pipeDir is set.
func TaskEnv(g ledger.Grant, pipeDir string) map[string]string {
	pct := int(math.Round(g.Fraction * 100))
	pct = min(max(pct, 1), 100)
	env := map[string]string{
		"CUDA_VISIBLE_DEVICES":              g.UUID,
		"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": strconv.Itoa(pct),
	}
	if g.MemMiB > 0 {
		// Device 0: with CUDA_VISIBLE_DEVICES set, the client sees only this GPU.
		env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = "0=" + strconv.FormatUint(g.MemMiB, 10) + "M"
	}
	if pipeDir != "" {
		env["CUDA_MPS_PIPE_DIRECTORY"] = pipeDir
	}
	return env
}

// WholeGPUEnv turns NVIDIA_VISIBLE_DEVICES, as set by Nomad's nvidia device
// plugin, into CUDA_VISIBLE_DEVICES for a process launched without a
// container runtime. "", "void" and "none" set nothing. "all" keeps every
// GPU visible by also setting nothing: CUDA reads CUDA_VISIBLE_DEVICES=all
// as an invalid entry and would then show the task no GPU at all.
func WholeGPUEnv(nvidiaVisibleDevices string) map[string]string {
	v := strings.TrimSpace(nvidiaVisibleDevices)
	switch strings.ToLower(v) {
	case "", "void", "none", "all":
		return map[string]string{}
	}
	var ids []string
	for _, id := range strings.Split(v, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return map[string]string{}
	}
	return map[string]string{"CUDA_VISIBLE_DEVICES": strings.Join(ids, ",")}
}

// WholeGrantsEnv shows a task the whole GPUs the ledger granted it, in grant order.
func WholeGrantsEnv(grants []ledger.Grant) map[string]string {
	if len(grants) == 0 {
		return map[string]string{}
	}
	ids := make([]string, len(grants))
	for i, g := range grants {
		ids[i] = g.UUID
	}
	return map[string]string{"CUDA_VISIBLE_DEVICES": strings.Join(ids, ",")}
}
