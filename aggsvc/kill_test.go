package aggsvc

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHelperWorker is not a test: TestWorkerProcessKilled runs the test
// binary as a separate worker process with it, then SIGKILLs that process.
func TestHelperWorker(t *testing.T) {
	addr := os.Getenv("AGGSVC_HELPER_ADDR")
	if addr == "" {
		t.Skip("helper process for TestWorkerProcessKilled")
	}
	c, err := Dial(context.Background(), ClientConfig{Addrs: []string{addr}, Job: "proc",
		Token: JobToken(testKey, "proc"), Rank: 2, Workers: 3})
	if err != nil {
		os.Exit(3)
	}
	if err := c.AllReduce(context.Background(), 0, make([]float32, 64), OpSum); err != nil {
		os.Exit(4)
	}
	os.Stdout.WriteString("pushed step 0\n")
	select {} // stalls in step 1 until killed
}

// TestWorkerProcessKilled: a real worker process does step 0, then is
// killed with SIGKILL while the other two wait in step 1; they get a
// worker-lost error naming rank 2, not a hang.
func TestWorkerProcessKilled(t *testing.T) {
	s := startServer(t, nil)
	addr := []string{s.Addr().String()}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWorker$")
	cmd.Env = append(os.Environ(), "AGGSVC_HELPER_ADDR="+addr[0])
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	cs := []*Client{dialWorker(t, addr, "proc", 0, 3, nil), dialWorker(t, addr, "proc", 1, 3, nil)}
	run := func(step uint64) []error {
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, c := range cs {
			wg.Go(func() { errs[i] = c.AllReduce(within(t, 30*time.Second), step, make([]float32, 64), OpSum) })
		}
		wg.Wait()
		return errs
	}
	for _, err := range run(0) {
		if err != nil {
			t.Fatalf("step 0 with the helper: %v", err)
		}
	}
	done := make(chan []error)
	go func() { done <- run(1) }()
	waitFor(t, func() bool { return openSlots(s, "proc") == 1 })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for _, err := range <-done {
		if serverCode(err) != CodeWorkerLost || !strings.Contains(err.Error(), "rank 2 disconnected") {
			t.Fatalf("want worker-lost naming rank 2, got %v (helper said %q)", err, out.String())
		}
	}
}
