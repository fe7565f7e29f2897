package mps

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeMPS puts a fake nvidia-cuda-mps-control first on PATH. It appends
// one line per call to the returned log: its args, stdin and MPS env.
// A call whose args are "-d" fails when the file <dir>/fail exists.
func fakeMPS(t *testing.T) (logPath, dir string) {
	t.Helper()
	dir = t.TempDir()
	logPath = filepath.Join(dir, "calls.log")
	script := `#!/bin/sh
in=$(cat)
if [ "$1" = "-d" ] && [ -e "` + dir + `/fail" ]; then
  echo "cannot start: fake failure" >&2
  exit 3
fi
printf 'args=[%s] stdin=[%s] dev=[%s] pipe=[%s] log=[%s]\n' "$*" "$in" "$CUDA_VISIBLE_DEVICES" "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY" >> "` + logPath + `"
`
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, DefaultBinary), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return logPath, dir
}

func calls(t *testing.T, logPath string) []string {
	t.Helper()
	data, err := os.ReadFile(logPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func newManager(t *testing.T, base string) *Manager {
	t.Helper()
	m, err := New(Config{Enabled: true, BaseDir: base})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStartOnceStopOnce(t *testing.T) {
	logPath, _ := fakeMPS(t)
	base := t.TempDir()
	m := newManager(t, base)
	if err := m.Check(); err != nil {
		t.Fatalf("check: %v", err)
	}

	pipe := filepath.Join(base, "GPU-a", "pipe")
	logDir := filepath.Join(base, "GPU-a", "log")
	for i := 0; i < 3; i++ {
		got, err := m.Acquire("GPU-a")
		if err != nil || got != pipe {
			t.Fatalf("acquire %d = %q, %v; want %q", i, got, err, pipe)
		}
	}
	for _, d := range []string{pipe, logDir} {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			t.Errorf("%s not created: %v", d, err)
		}
	}
	start := "args=[-d] stdin=[] dev=[GPU-a] pipe=[" + pipe + "] log=[" + logDir + "]"
	if got := calls(t, logPath); len(got) != 1 || got[0] != start {
		t.Fatalf("after 3 acquires calls = %q, want one start %q", got, start)
	}
	if m.Refs("GPU-a") != 3 {
		t.Errorf("refs = %d, want 3", m.Refs("GPU-a"))
	}
	for i := 0; i < 2; i++ {
		if err := m.Release("GPU-a"); err != nil {
			t.Fatal(err)
		}
	}
	if got := calls(t, logPath); len(got) != 1 {
		t.Fatalf("daemon stopped early: %q", got)
	}
	if err := m.Release("GPU-a"); err != nil {
		t.Fatal(err)
	}
	quit := "args=[] stdin=[quit] dev=[GPU-a] pipe=[" + pipe + "] log=[" + logDir + "]"
	if got := calls(t, logPath); len(got) != 2 || got[1] != quit {
		t.Fatalf("calls = %q, want the start then %q", got, quit)
	}
	// Extra releases and releases of unknown GPUs do nothing.
	if err := m.Release("GPU-a"); err != nil {
		t.Error(err)
	}
	if err := m.Release("GPU-zzz"); err != nil {
		t.Error(err)
	}
	if got := calls(t, logPath); len(got) != 2 {
		t.Errorf("extra release ran commands: %q", got)
	}
	// A new first acquire starts a fresh daemon.
	if _, err := m.Acquire("GPU-a"); err != nil {
		t.Fatal(err)
	}
	if got := calls(t, logPath); len(got) != 3 || got[2] != start {
		t.Errorf("restart calls = %q", got)
	}
}

func TestOneDaemonPerGPU(t *testing.T) {
	logPath, _ := fakeMPS(t)
	m := newManager(t, t.TempDir())
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		for _, uuid := range []string{"GPU-a", "GPU-b"} {
			wg.Add(1)
			go func(uuid string) {
				defer wg.Done()
				if _, err := m.Acquire(uuid); err != nil {
					t.Error(err)
				}
			}(uuid)
		}
	}
	wg.Wait()
	got := calls(t, logPath)
	if len(got) != 2 || !strings.Contains(strings.Join(got, "\n"), "dev=[GPU-a]") || !strings.Contains(strings.Join(got, "\n"), "dev=[GPU-b]") {
		t.Fatalf("calls = %q, want one start per GPU", got)
	}
	if m.Refs("GPU-a") != 8 || m.Refs("GPU-b") != 8 {
		t.Errorf("refs = %d, %d; want 8, 8", m.Refs("GPU-a"), m.Refs("GPU-b"))
	}
}

func TestAdoptAfterRestart(t *testing.T) {
	logPath, _ := fakeMPS(t)
	base := t.TempDir()
	first := newManager(t, base)
	for i := 0; i < 2; i++ {
		if _, err := first.Acquire("GPU-a"); err != nil {
			t.Fatal(err)
		}
	}
	// The plugin restarts: a new manager adopts the two running tasks.
	second := newManager(t, base)
	for i := 0; i < 2; i++ {
		if err := second.Adopt("GPU-a"); err != nil {
			t.Fatal(err)
		}
	}
	pipe, err := second.Acquire("GPU-a")
	if err != nil || pipe != filepath.Join(base, "GPU-a", "pipe") {
		t.Fatalf("acquire after adopt = %q, %v", pipe, err)
	}
	if got := calls(t, logPath); len(got) != 1 {
		t.Fatalf("adopt started another daemon: %q", got)
	}
	for i := 0; i < 3; i++ {
		if err := second.Release("GPU-a"); err != nil {
			t.Fatal(err)
		}
	}
	got := calls(t, logPath)
	if len(got) != 2 || !strings.HasPrefix(got[1], "args=[] stdin=[quit]") {
		t.Errorf("calls = %q, want one start and one quit", got)
	}
	if err := second.Adopt("../etc"); err == nil {
		t.Error("adopt of a path-like UUID: want error")
	}
}

func TestDisabled(t *testing.T) {
	logPath, _ := fakeMPS(t)
	m, err := New(Config{Enabled: false})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := m.Acquire("GPU-a")
	if pipe != "" || err != nil {
		t.Errorf("acquire = %q, %v; want \"\", nil", pipe, err)
	}
	if err := m.Adopt("GPU-a"); err != nil {
		t.Error(err)
	}
	if err := m.Release("GPU-a"); err != nil {
		t.Error(err)
	}
	if err := m.Check(); err != nil {
		t.Error(err)
	}
	if m.Enabled() || m.PipeDir("GPU-a") != "" || m.Refs("GPU-a") != 0 {
		t.Error("disabled manager reports state")
	}
	if got := calls(t, logPath); len(got) != 0 {
		t.Errorf("disabled manager ran %q", got)
	}
}

func TestMissingBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	base := t.TempDir()
	m := newManager(t, base)
	err := m.Check()
	if err == nil || !strings.Contains(err.Error(), `control program "nvidia-cuda-mps-control" not found`) {
		t.Fatalf("check: %v", err)
	}
	if _, err := m.Acquire("GPU-a"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("acquire: %v", err)
	}
	if m.Refs("GPU-a") != 0 {
		t.Error("a failed acquire kept a reference")
	}
	m2, _ := New(Config{Enabled: true, BaseDir: base, Binary: "/nonexistent/mps-control"})
	if _, err := m2.Acquire("GPU-a"); err == nil || !strings.Contains(err.Error(), "/nonexistent/mps-control") {
		t.Errorf("acquire with a bad binary path: %v", err)
	}
}

func TestStartFailure(t *testing.T) {
	logPath, dir := fakeMPS(t)
	if err := os.WriteFile(filepath.Join(dir, "fail"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, t.TempDir())
	_, err := m.Acquire("GPU-a")
	if err == nil || !strings.Contains(err.Error(), "cannot start: fake failure") || !strings.Contains(err.Error(), "GPU-a") {
		t.Fatalf("err = %v, want the daemon's own message", err)
	}
	if m.Refs("GPU-a") != 0 {
		t.Error("failed start kept a reference")
	}
	// Once the cause is gone, the next acquire starts the daemon.
	if err := os.Remove(filepath.Join(dir, "fail")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire("GPU-a"); err != nil {
		t.Fatal(err)
	}
	if got := calls(t, logPath); len(got) != 1 {
		t.Errorf("calls = %q", got)
	}
}

func TestConfigErrors(t *testing.T) {
	if _, err := New(Config{Enabled: true}); err == nil || !strings.Contains(err.Error(), "base directory") {
		t.Errorf("no base dir: %v", err)
	}
	m := newManager(t, t.TempDir())
	for _, bad := range []string{"", "../x", "a/b", "-d", " GPU"} {
		if _, err := m.Acquire(bad); err == nil {
			t.Errorf("acquire(%q): want error", bad)
		}
	}
}

// recordingRunner checks the Manager talks to an injected Runner.
type recordingRunner struct {
	mu    sync.Mutex
	calls []string
}

func (r *recordingRunner) Run(_ context.Context, env []string, stdin, name string, args ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, strings.Join(append([]string{filepath.Base(name)}, args...), " ")+" stdin="+stdin+" env="+strings.Join(env, ","))
	return nil
}

func TestInjectedRunner(t *testing.T) {
	fakeMPS(t) // the binary must still be found on PATH
	r := &recordingRunner{}
	base := t.TempDir()
	m, err := New(Config{Enabled: true, BaseDir: base, Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire("GPU-x"); err != nil {
		t.Fatal(err)
	}
	if err := m.Release("GPU-x"); err != nil {
		t.Fatal(err)
	}
	env := "CUDA_VISIBLE_DEVICES=GPU-x,CUDA_MPS_PIPE_DIRECTORY=" + filepath.Join(base, "GPU-x", "pipe") +
		",CUDA_MPS_LOG_DIRECTORY=" + filepath.Join(base, "GPU-x", "log")
	want := []string{DefaultBinary + " -d stdin= env=" + env, DefaultBinary + " stdin=quit\n env=" + env}
	if len(r.calls) != 2 || r.calls[0] != want[0] || r.calls[1] != want[1] {
		t.Errorf("calls = %q, want %q", r.calls, want)
	}
}

// TestNeverTouchesComputeModeOrMIG guards the package's promise by
// scanning its own source for the commands that would break it.
func TestNeverTouchesComputeModeOrMIG(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"nvidia-smi", "SetComputeMode", "SetMigMode", "-mig", "EXCLUSIVE_PROCESS"} {
			if strings.Contains(string(src), bad) {
				t.Errorf("%s mentions %q", f, bad)
			}
		}
	}
}
