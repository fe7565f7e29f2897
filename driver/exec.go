package driver

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/nomad/plugins/drivers"
)

var errEmptyCommand = errors.New("exec: the command must have at least one element")

// ExecTask runs a command in the task's context (nomad alloc exec without
// a terminal).
func (d *Driver) ExecTask(taskID string, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error) {
	if len(cmd) == 0 {
		return nil, errEmptyCommand
	}
	h, ok := d.tasks.get(taskID)
	if !ok {
		return nil, drivers.ErrTaskNotFound
	}
	out, code, err := h.exec.Exec(time.Now().Add(timeout), cmd[0], cmd[1:])
	if err != nil {
		return nil, err
	}
	return &drivers.ExecTaskResult{Stdout: out, ExitResult: &drivers.ExitResult{ExitCode: code}}, nil
}

var _ drivers.ExecTaskStreamingRawDriver = (*Driver)(nil)

// ExecTaskStreamingRaw serves interactive nomad alloc exec.
func (d *Driver) ExecTaskStreamingRaw(ctx context.Context, taskID string, cmd []string, tty bool, stream drivers.ExecTaskStream) error {
	if len(cmd) == 0 {
		return errEmptyCommand
	}
	h, ok := d.tasks.get(taskID)
	if !ok {
		return drivers.ErrTaskNotFound
	}
	return h.exec.ExecStreaming(ctx, cmd, tty, stream)
}
