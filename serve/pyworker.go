package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// PyWorkerOptions start a local Python model worker (workloads/serve/worker.py).
type PyWorkerOptions struct {
	Model   string
	Token   string
	Python  string // default /usr/bin/python3 (Debian's, with python3-torch)
	Script  string // path to worker.py
	Threads int    // torch threads (default 1)
	Stderr  *os.File
}

// PyWorker is a running local worker process.
type PyWorker struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

// StartPyWorker launches the worker on 127.0.0.1 (a kernel-chosen port) and
// waits up to a minute for it to report it is listening.
func StartPyWorker(ctx context.Context, o PyWorkerOptions) (*PyWorker, error) {
	if o.Python == "" {
		o.Python = "/usr/bin/python3"
	}
	if o.Threads <= 0 {
		o.Threads = 1
	}
	cmd := exec.Command(o.Python, o.Script, "--model", o.Model, "--host", "127.0.0.1", "--port", "0", "--threads", fmt.Sprint(o.Threads))
	cmd.Env = append(os.Environ(), "CARAVAN_SERVE_WORKER_TOKEN="+o.Token)
	cmd.Stderr = o.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &PyWorker{cmd: cmd, done: make(chan struct{})}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				addrc <- a
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(w.done) }() // its status is not needed
	select {
	case w.addr = <-addrc:
		return w, nil
	case <-w.done:
		return nil, fmt.Errorf("serve: python worker %s exited during start: %v", o.Model, cmd.ProcessState)
	case <-time.After(time.Minute):
	case <-ctx.Done():
	}
	w.Kill()
	return nil, errors.New("serve: python worker did not start within a minute")
}

// Addr is host:port.
func (w *PyWorker) Addr() string { return w.addr }

// Kill stops the worker at once (SIGKILL, as a crash would) and waits.
func (w *PyWorker) Kill() {
	_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL) // already gone is fine
	<-w.done
}

// WorkerScript finds workloads/serve/worker.py from a directory inside the
// repo (workloads/ is what isolated caravan tasks are given to run).
func WorkerScript(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "workloads", "serve", "worker.py")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("serve: workloads/serve/worker.py not found above " + dir)
		}
	}
}
