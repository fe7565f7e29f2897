package driver

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caravan-dl/caravan/driver/ledger"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/nomad/drivers/shared/executor"
	"github.com/hashicorp/nomad/plugins/drivers"
)

// taskHandle is one running (or finished) task.
type taskHandle struct {
	exec         executor.Executor
	pluginClient *plugin.Client
	pid          int
	logger       hclog.Logger
	taskConfig   *drivers.TaskConfig
	grants       []ledger.Grant
	mpsGPUs      []string
	startedAt    time.Time
	// checkpointDir is the task's checkpoint dir on the host; a clean exit
	// nobody asked for (stopRequested false) means the run completed.
	checkpointDir string
	stopRequested atomic.Bool

	// release frees the task's GPU share; releaseOnce makes the exit path
	// and DestroyTask safe to race.
	release     func()
	releaseOnce sync.Once

	mu          sync.RWMutex
	procState   drivers.TaskState
	completedAt time.Time
	exitResult  *drivers.ExitResult
	doneCh      chan struct{}
}

func (h *taskHandle) status() *drivers.TaskStatus {
	h.mu.RLock()
	defer h.mu.RUnlock()
	attrs := map[string]string{"pid": strconv.Itoa(h.pid)}
	if len(h.grants) > 0 {
		attrs["gpu_uuids"] = strings.Join(grantUUIDs(h.grants), ",")
		attrs["gpu_fraction"] = formatFraction(h.grants[0].Fraction)
	}
	return &drivers.TaskStatus{
		ID:               h.taskConfig.ID,
		Name:             h.taskConfig.Name,
		State:            h.procState,
		StartedAt:        h.startedAt,
		CompletedAt:      h.completedAt,
		ExitResult:       h.exitResult.Copy(),
		DriverAttributes: attrs,
	}
}

func (h *taskHandle) running() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.procState == drivers.TaskStateRunning
}

// run waits for the process and records how it ended. Only a clean exit
// frees the GPU share: if the executor connection is lost, or the plugin is
// shutting down (ctx done), the process may still be running, so the share
// stays taken until DestroyTask or a recovered driver sees the exit.
func (h *taskHandle) run(ctx context.Context) {
	defer close(h.doneCh)
	ps, err := h.exec.Wait(ctx)

	h.mu.Lock()
	h.completedAt = time.Now()
	if err != nil {
		h.exitResult = &drivers.ExitResult{Err: err, ExitCode: -1}
		h.procState = drivers.TaskStateUnknown
		h.mu.Unlock()
		h.logger.Warn("lost track of task process", "error", err)
		return
	}
	h.procState = drivers.TaskStateExited
	h.exitResult = &drivers.ExitResult{ExitCode: ps.ExitCode, Signal: ps.Signal, OOMKilled: ps.OOMKilled}
	if !ps.Time.IsZero() {
		h.completedAt = ps.Time
	}
	h.mu.Unlock()
	h.releaseGPUs()
	h.recordCompletion(ps.ExitCode)
}

// recordCompletion marks the checkpoint of a task that finished on its
// own, so a re-run of the job starts fresh. A task stopped by Nomad
// (preemption, job stop, purge) keeps its checkpoint for a resume.
func (h *taskHandle) recordCompletion(exitCode int) {
	if exitCode != 0 || h.stopRequested.Load() || h.checkpointDir == "" {
		return
	}
	if err := markFinished(h.checkpointDir); err != nil {
		h.logger.Warn("recording that the task completed; a re-run will resume its checkpoint", "error", err)
	}
}

// releaseGPUs frees the task's ledger grant and MPS references exactly once.
func (h *taskHandle) releaseGPUs() {
	h.releaseOnce.Do(func() {
		if h.release != nil {
			h.release()
		}
	})
}

func grantUUIDs(gs []ledger.Grant) []string {
	out := make([]string, 0, len(gs))
	for _, g := range gs {
		out = append(out, g.UUID)
	}
	return out
}

func formatFraction(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}
