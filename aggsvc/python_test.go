package aggsvc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const systemPython = "/usr/bin/python3"

// needTorch skips when Debian's python3-torch is not installed.
func needTorch(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the PyTorch run")
	}
	if _, err := os.Stat(systemPython); err != nil {
		t.Skip("no " + systemPython + ": install python3-torch (scripts/install-deps.sh) to run the DDP hook test")
	}
	if out, err := exec.Command(systemPython, "-c", "import torch.distributed").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import torch (install python3-torch): %v %s", systemPython, err, out)
	}
}

// DDPResult is rank 0's summary line of workloads/train_ddp_aggsvc.py.
type DDPResult struct {
	Params       int                `json:"params"`
	FirstLoss    map[string]float64 `json:"first_loss"`
	LastLoss     map[string]float64 `json:"last_loss"`
	StepSeconds  map[string]float64 `json:"step_seconds"`
	MaxParamDiff float64            `json:"max_param_diff"`
	MaxParam     float64            `json:"max_param"`
}

// TestPythonDDPHook trains with two real PyTorch processes whose DDP hook
// averages every gradient bucket through an in-process server, in lockstep
// with a plain gloo all-reduce twin; their parameters must agree.
func TestPythonDDPHook(t *testing.T) {
	needTorch(t)
	s := startServer(t, nil)
	const job, steps = "default/hook-test", 15
	env := []string{"CARAVAN_AGGREGATOR_ADDRS=" + s.Addr().String(), "CARAVAN_AGGREGATOR_JOB=" + job,
		"CARAVAN_AGGREGATOR_TOKEN=" + JobToken(testKey, job)}
	res := runDDP(t, env, "--mode", "compare", "--steps", fmt.Sprint(steps), "--hidden", "48",
		"--partition-elems", "1000") // several partitions per bucket
	t.Logf("result: %+v", res)
	if res.MaxParamDiff > 1e-5*max(res.MaxParam, 1) {
		t.Fatalf("aggsvc and gloo parameters differ by %g (largest parameter %g)", res.MaxParamDiff, res.MaxParam)
	}
	if res.LastLoss["aggsvc"] >= res.FirstLoss["aggsvc"] {
		t.Fatalf("loss did not fall through aggsvc: %v -> %v", res.FirstLoss["aggsvc"], res.LastLoss["aggsvc"])
	}
	if ok := counterValue(s.m.steps.WithLabelValues(job, "ok")); ok < steps*2 {
		t.Fatalf("server reduced %v partitions, want at least %d", ok, steps*2)
	}
}

// runDDP runs the workload with two ranks and returns rank 0's result.
func runDDP(t testing.TB, env []string, args ...string) DDPResult {
	t.Helper()
	script, err := filepath.Abs("../workloads/train_ddp_aggsvc.py")
	if err != nil {
		t.Fatal(err)
	}
	// TCPStore rendezvous on a free loopback port: FileStore teardown can hang.
	init := "tcp://" + freeLoopback(t)
	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		cmd := exec.Command(systemPython, append([]string{script, "--rank", fmt.Sprint(r), "--world", "2", "--init", init}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = &outs[r], &outs[r]
		cmd.WaitDelay = time.Second
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
		wg.Go(func() { errs[r] = cmd.Wait(); timer.Stop() })
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v\n%s", r, err, outs[r].String())
		}
	}
	for _, line := range strings.Split(outs[0].String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			var res DDPResult
			if err := json.Unmarshal([]byte(rest), &res); err != nil {
				t.Fatal(err)
			}
			return res
		}
	}
	t.Fatalf("rank 0 printed no RESULT line:\n%s", outs[0].String())
	return DDPResult{}
}

// TestPythonRingMatchesGo: both clients must send a partition to the same
// instance, or a job's workers would wait on different servers.
func TestPythonRingMatchesGo(t *testing.T) {
	if _, err := os.Stat(systemPython); err != nil {
		t.Skip("no " + systemPython)
	}
	addrs := []string{"10.0.0.1:7070", "10.0.0.2:7070", "[::1]:7071"}
	r := NewRing(addrs)
	var want []string
	for st := range 20 {
		for p := range 5 {
			want = append(want, fmt.Sprint(r.Addrs()[r.Pick("default/j", uint64(st), uint32(p))]))
		}
	}
	code := `import sys; sys.path.insert(0, "../workloads"); import caravan_aggsvc as a
r = a.Ring(["10.0.0.1:7070", "10.0.0.2:7070", "[::1]:7071"])
print(" ".join(r.addrs[r.pick("default/j", s, p)] for s in range(20) for p in range(5)))`
	out, err := exec.Command(systemPython, "-c", code).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != strings.Join(want, " ") {
		t.Fatalf("python ring:\n%s\ngo ring:\n%s", got, strings.Join(want, " "))
	}
}

func freeLoopback(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
