package devcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// RunHCL parses a jobspec through the agent (as `nomad job run` does), with
// HCL2 variables given as name → value, and registers it.
func (c *Cluster) RunHCL(hcl string, vars map[string]string) (*api.Job, error) {
	var vb strings.Builder
	for k, v := range vars {
		fmt.Fprintf(&vb, "%s = %q\n", k, v)
	}
	job, err := c.API.Jobs().ParseHCLOpts(&api.JobsParseRequest{JobHCL: hcl, Variables: vb.String(), Canonicalize: true})
	if err != nil {
		return nil, fmt.Errorf("parse jobspec: %w", err)
	}
	if _, _, err := c.API.Jobs().Register(job, nil); err != nil {
		return nil, fmt.Errorf("register %s: %w", *job.ID, err)
	}
	return job, nil
}

// RunFile runs a jobspec file with HCL2 variables.
func (c *Cluster) RunFile(path string, vars map[string]string) (*api.Job, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return c.RunHCL(string(b), vars)
}

// WaitAlloc polls the allocations of the job's current incarnation (not those
// of an earlier, purged job with the same ID) until match accepts one.
func (c *Cluster) WaitAlloc(ctx context.Context, jobID string, match func(*api.Allocation) bool) (*api.Allocation, error) {
	var seen string
	for {
		stubs, _, err := c.API.Jobs().Allocations(jobID, false, nil)
		if err == nil {
			for _, s := range stubs {
				a, _, err := c.API.Allocations().Info(s.ID, nil)
				if err != nil {
					continue
				}
				seen = describe(a)
				if match(a) {
					return a, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("job %s: condition not met; last alloc: %s", jobID, seen)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TaskState is a match helper: the named task reached state (running/dead).
func TaskState(task, state string) func(*api.Allocation) bool {
	return func(a *api.Allocation) bool {
		ts := a.TaskStates[task]
		return ts != nil && ts.State == state
	}
}

// Events renders a task's events, one per line, for assertions and failure output.
func Events(a *api.Allocation, task string) string {
	ts := a.TaskStates[task]
	if ts == nil {
		return ""
	}
	var b strings.Builder
	for _, e := range ts.Events {
		fmt.Fprintf(&b, "%s: %s %s\n", e.Type, e.DisplayMessage, e.DriverError)
	}
	return b.String()
}

func describe(a *api.Allocation) string {
	var parts []string
	for name, ts := range a.TaskStates {
		parts = append(parts, fmt.Sprintf("%s=%s failed=%v", name, ts.State, ts.Failed))
	}
	return fmt.Sprintf("%s client=%s desired=%s tasks[%s]", a.ID[:8], a.ClientStatus, a.DesiredStatus, strings.Join(parts, " "))
}

// Logs returns the whole stdout (or stderr) log of a task.
func (c *Cluster) Logs(a *api.Allocation, task, kind string) (string, error) {
	cancel := make(chan struct{})
	defer close(cancel)
	frames, errs := c.API.AllocFS().Logs(a, false, task, kind, "start", 0, cancel, nil)
	var b strings.Builder
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				return b.String(), nil
			}
			b.Write(f.Data)
		case err := <-errs:
			if err != nil && err != io.EOF {
				return b.String(), err
			}
			return b.String(), nil
		}
	}
}

// Cat reads a file in the allocation directory through Nomad's fs API.
func (c *Cluster) Cat(a *api.Allocation, path string) (string, error) {
	rc, err := c.API.AllocFS().Cat(a, path, nil)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}

// PluginPIDs lists caravan-driver plugin processes (not executors) whose
// parent is one of this cluster's agents.
func (c *Cluster) PluginPIDs() ([]int, error) {
	parents := map[int]bool{}
	for _, a := range c.Clients {
		parents[a.Pid()] = true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if !strings.HasSuffix(args[0], "caravan-driver") || len(args) > 1 {
			continue
		}
		if parents[ppid(pid)] {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

func ppid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command, which is in parentheses and may hold spaces.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return 0
	}
	p, _ := strconv.Atoi(fields[1])
	return p
}
