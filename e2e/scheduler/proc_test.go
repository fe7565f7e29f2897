package scheduler

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/live"
)

const token = "e2e-token"

// schedProc is one scheduler process; restart runs it again with the same
// arguments, as an operator (or Nomad) would after a crash.
type schedProc struct {
	t    testing.TB
	args []string
	addr string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startScheduler runs a scheduler with its own state and lock Variables
// (named for the test) and fast timings, and waits until it leads.
func startScheduler(t testing.TB, extra ...string) *schedProc {
	t.Helper()
	useCluster(t)
	name := strings.ToLower(t.Name())
	args := append([]string{
		"-token", token, "-log-level", "debug",
		"-state-path", "caravan/e2e/" + name + "/state", "-lock-path", "caravan/e2e/" + name + "/lock",
		"-lock-ttl", "10s", "-lock-delay", "1s", "-quantum", "1s", "-debounce", "100ms",
		"-progress-interval", "1s",
	}, extra...)
	p := launch(t, args)
	p.waitLeader(60 * time.Second)
	return p
}

// launch runs a scheduler process with args on a fresh port, without
// waiting for it to lead.
func launch(t testing.TB, args []string) *schedProc {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	p := &schedProc{t: t, addr: "127.0.0.1:" + strconv.Itoa(port), log: filepath.Join(t.TempDir(), "scheduler.log")}
	p.args = append([]string{"-listen", p.addr}, args...)
	p.start()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() || os.Getenv("CARAVAN_E2E_VERBOSE") != "" {
			b, _ := os.ReadFile(p.log)
			t.Logf("scheduler %s log:\n%s", p.addr, tail(string(b), 12000))
		}
	})
	return p
}

// peer runs a second instance sharing p's state and lock.
func (p *schedProc) peer() *schedProc {
	return launch(p.t, p.args[2:])
}

func (p *schedProc) start() {
	p.t.Helper()
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	cmd := exec.Command(schedBin, append([]string{"scheduler"}, p.args...)...)
	cmd.Env = append(os.Environ(), "NOMAD_ADDR="+cluster.Server.HTTPAddr)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(p.done)
	}()
}

// kill ends the process at once: no lock release, no final state write.
func (p *schedProc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func (p *schedProc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.kill()
	}
}

func (p *schedProc) waitLeader(timeout time.Duration) {
	p.t.Helper()
	waitFor(p.t, timeout, "scheduler leads", func() (bool, string) {
		v, err := p.queue()
		if err != nil {
			return false, err.Error()
		}
		return v.Leader, "standby"
	})
}

func (p *schedProc) queue() (*live.QueueView, error) {
	v, _, err := live.FetchQueue(context.Background(), "http://"+p.addr, token)
	return v, err
}

// job returns one job's line of the queue, nil if absent.
func (p *schedProc) job(id string) *live.QueueJob {
	v, err := p.queue()
	if err != nil {
		return nil
	}
	for i := range v.Jobs {
		if v.Jobs[i].ID == id {
			return &v.Jobs[i]
		}
	}
	return nil
}

// metric reads one unlabelled series from /metrics.
func (p *schedProc) metric(name string) float64 {
	req, _ := http.NewRequest(http.MethodGet, "http://"+p.addr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitFor polls cond until it holds, failing with its last words if not.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, last)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
