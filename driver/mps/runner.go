package mps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Runner runs one command to completion. env is added to the plugin's own
// environment; stdin is fed to the command.
type Runner interface {
	Run(ctx context.Context, env []string, stdin string, name string, args ...string) error
}

// ExecRunner runs commands with os/exec.
type ExecRunner struct{}

// waitDelay bounds how long Run waits for output after the command exits:
// `nvidia-cuda-mps-control -d` forks a daemon that may keep our pipes open.
const waitDelay = 2 * time.Second

// Run implements Runner; a failure carries the command's output.
func (ExecRunner) Run(ctx context.Context, env []string, stdin string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) {
		return nil // exited successfully; only a forked daemon held the pipe
	}
	if err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
		}
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}
