package devcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Agent is one running agent process (`nomad agent` or `consul agent -dev`)
// with its own ports, config file and log.
type Agent struct {
	Name     string
	HTTPAddr string // http://127.0.0.1:port
	RPCAddr  string // 127.0.0.1:port (Nomad only)
	Dir      string
	LogPath  string

	bin  string
	args []string
	cmd  *exec.Cmd
	done chan struct{}
}

func newAgent(bin, dir string, c agentConfig) (*Agent, error) {
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, c.Name+".hcl")
	if err := os.WriteFile(cfg, []byte(c.render()), 0o644); err != nil {
		return nil, err
	}
	return &Agent{
		Name:     c.Name,
		HTTPAddr: fmt.Sprintf("http://127.0.0.1:%d", c.HTTP),
		RPCAddr:  fmt.Sprintf("127.0.0.1:%d", c.RPC),
		Dir:      dir,
		LogPath:  filepath.Join(dir, c.Name+".log"),
		bin:      bin,
		args:     []string{"agent", "-config=" + cfg},
	}, nil
}

// Start launches the agent; its output is appended to LogPath.
func (a *Agent) Start() error {
	logf, err := os.OpenFile(a.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(a.bin, a.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so a Ctrl-C meant for a test or demo reaches the
	// agent only through Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", a.Name, err)
	}
	a.cmd, a.done = cmd, make(chan struct{})
	go func() {
		// The exit status is for Exited and the log; Stop reports kills.
		_ = cmd.Wait()
		logf.Close()
		close(a.done)
	}()
	return nil
}

// Pid is the agent's process id, 0 if it is not running.
func (a *Agent) Pid() int {
	if a.cmd == nil || a.cmd.Process == nil || a.Exited() {
		return 0
	}
	return a.cmd.Process.Pid
}

// Exited reports whether the agent process has ended.
func (a *Agent) Exited() bool {
	if a.done == nil {
		return true
	}
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// Stop interrupts the agent and kills it if it has not left within grace.
func (a *Agent) Stop(grace time.Duration) error {
	if a.Exited() {
		return nil
	}
	a.cmd.Process.Signal(os.Interrupt)
	select {
	case <-a.done:
		return nil
	case <-time.After(grace):
	}
	a.cmd.Process.Kill()
	select {
	case <-a.done:
		return errors.New(a.Name + " had to be killed")
	case <-time.After(5 * time.Second):
		return errors.New(a.Name + " did not exit")
	}
}

// Restart stops and starts the agent with the same config and data dir.
func (a *Agent) Restart(grace time.Duration) error {
	if err := a.Stop(grace); err != nil {
		return err
	}
	return a.Start()
}
