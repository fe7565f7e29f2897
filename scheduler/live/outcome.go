package live

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// failure says why a finished job failed, "" if it succeeded: the first
// failed task of its allocations, in the words of its last telling event
// (an exit code, a driver refusal). Allocations stopped by a preemption
// end without failing, so they do not count.
func failure(as []*api.AllocationListStub) string {
	sorted := append([]*api.AllocationListStub(nil), as...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].CreateIndex > sorted[j].CreateIndex })
	for _, a := range sorted {
		for _, name := range sortedTasks(a.TaskStates) {
			if ts := a.TaskStates[name]; ts != nil && ts.Failed {
				return fmt.Sprintf("task %q in group %q failed: %s", name, a.TaskGroup, why(ts.Events))
			}
		}
		if a.ClientStatus == "failed" || a.ClientStatus == "lost" {
			return fmt.Sprintf("allocation of group %q %s: %s", a.TaskGroup, a.ClientStatus, orElse(a.ClientDescription, "no description"))
		}
	}
	return ""
}

// why reads a failed task's events, newest first, for the telling one.
func why(evs []*api.TaskEvent) string {
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		switch e.Type {
		case api.TaskTerminated:
			return fmt.Sprintf("exit code %d%s", e.ExitCode, suffix(e.Message))
		case api.TaskDriverFailure, api.TaskSetupFailure, api.TaskFailedValidation, api.TaskArtifactDownloadFailed:
			return e.Type + ": " + orElse(e.DriverError, orElse(e.DisplayMessage, e.Message))
		}
	}
	if n := len(evs); n > 0 {
		return orElse(evs[n-1].DisplayMessage, evs[n-1].Type)
	}
	return "no task events"
}

func sortedTasks(m map[string]*api.TaskState) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func orElse(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return " (" + msg + ")"
}
