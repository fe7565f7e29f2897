package mps

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cmd")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExecRunnerPassesEnvAndStdin(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	cmd := script(t, `printf '%s|%s|%s|%s' "$*" "$(cat)" "$CARAVAN_TEST_VAR" "${HOME:+home}" > `+out)
	err := ExecRunner{}.Run(context.Background(), []string{"CARAVAN_TEST_VAR=v1"}, "quit\n", cmd, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	// HOME comes from the plugin's own environment, which is kept.
	want := "a b|quit|v1|"
	if os.Getenv("HOME") != "" {
		want += "home"
	}
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestExecRunnerFailureCarriesOutput(t *testing.T) {
	cmd := script(t, "echo 'no GPU here' >&2; exit 4\n")
	err := ExecRunner{}.Run(context.Background(), nil, "", cmd, "-d")
	if err == nil || !strings.Contains(err.Error(), "no GPU here") || !strings.Contains(err.Error(), "exit status 4") {
		t.Errorf("err = %v", err)
	}
}

// A daemonising command exits at once but leaves a child holding its
// output pipe: Run must return success instead of waiting for the child.
func TestExecRunnerDaemonKeepsPipe(t *testing.T) {
	cmd := script(t, "sleep 5 &\necho started\nexit 0\n")
	if err := (ExecRunner{}).Run(context.Background(), nil, "", cmd, "-d"); err != nil {
		t.Errorf("err = %v, want nil", err)
	}
}

func TestExecRunnerTimeout(t *testing.T) {
	cmd := script(t, "exec sleep 30\n")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := (ExecRunner{}).Run(ctx, nil, "", cmd); err == nil {
		t.Error("a command past its deadline: want an error")
	}
}
