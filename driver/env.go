package driver

import (
	"maps"
	"sort"
	"strings"
)

// defaultPath is the task's PATH when Nomad gives none (isolated tasks do
// not inherit the agent's environment).
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// driverOwnedVar says whether a variable of the job's env is the
// driver's alone: the GPU ledger decides which GPUs a task may use, so a
// job may not choose them through NVIDIA_VISIBLE_DEVICES (only Nomad's
// device reservations set it, in DeviceEnv), CUDA_VISIBLE_DEVICES or the
// CUDA MPS variables (which could point at another task's MPS daemon).
func driverOwnedVar(k string) bool {
	switch k {
	case nvidiaVisibleDevices, "CUDA_VISIBLE_DEVICES":
		return true
	}
	return strings.HasPrefix(k, "CUDA_MPS_")
}

// envList builds the task's environment: Nomad's task env without the
// driver-owned variables, then caravan's, which always has the last word.
func envList(base, caravan map[string]string) []string {
	merged := make(map[string]string, len(base)+len(caravan)+1)
	for k, v := range base {
		if !driverOwnedVar(k) {
			merged[k] = v
		}
	}
	if _, ok := merged["PATH"]; !ok {
		merged["PATH"] = defaultPath
	}
	maps.Copy(merged, caravan)
	out := make([]string, 0, len(merged))
	for k, v := range merged {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
