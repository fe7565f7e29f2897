// Command caravan-demo starts a local Nomad agent with the caravan driver
// (simulated GPUs unless NVML finds real ones), runs the example jobspecs —
// two tasks sharing one GPU and a real PyTorch training job — shows their
// status and output, then starts `caravan scheduler` and sends a small mixed
// workload through its queue, printing the queue as it drains. Ctrl-C stops
// everything cleanly.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/caravan-dl/caravan/internal/devcluster"
)

func main() {
	exitAfter := flag.Duration("exit-after", 0, "stop by itself after this long once the jobs are done (0 = wait for Ctrl-C)")
	flag.Parse()
	if err := run(*exitAfter); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(exitAfter time.Duration) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Ctrl-C is how a user ends the demo: whatever it cut short, that is a
	// clean exit (status 0), not a failure of `make demo`.
	defer func() {
		if ctx.Err() != nil && err != nil {
			fmt.Fprintln(os.Stderr, "demo: interrupted:", err)
			err = nil
		}
	}()
	root, err := devcluster.RepoRoot()
	if err != nil {
		return err
	}
	gpus := devcluster.GPUs{Model: "Simulated A100 40GB", MemoryMiB: 40960, Count: 2}
	if realGPUs() {
		gpus.Count = -1 // let the driver's NVML backend report the real ones
	}
	dir := filepath.Join(root, ".demo")
	os.RemoveAll(dir)
	fmt.Println("starting a Nomad agent with the caravan driver (logs in .demo/)...")
	c, err := devcluster.Start(ctx, devcluster.Options{GPUs: gpus, Dir: dir})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("\nstopping jobs and the agent...")
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "demo: stop:", err)
		}
	}()
	fmt.Printf("Nomad UI: %s/ui\n", c.Server.HTTPAddr)
	printNode(c)
	if err := submit(c, root); err != nil {
		return err
	}
	watch(ctx, c, []string{"shared-gpu", "train-digits"})
	showOutput(c)
	if err := runScheduled(ctx, c, root); err != nil {
		return err
	}
	if ctx.Err() != nil { // Ctrl-C: go straight to stopping
		return nil
	}
	fmt.Printf("\nNomad UI: %s/ui  (NOMAD_ADDR=%s nomad job status)\n", c.Server.HTTPAddr, c.Server.HTTPAddr)
	wait(ctx, exitAfter)
	return nil
}

func realGPUs() bool {
	for _, p := range []string{"/dev/nvidia0", "/dev/nvidiactl"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

func printNode(c *devcluster.Cluster) {
	nodes, _, err := c.API.Nodes().List(nil)
	if err != nil || len(nodes) == 0 {
		return
	}
	n, _, err := c.API.Nodes().Info(nodes[0].ID, nil)
	if err != nil {
		return
	}
	d := n.Drivers["caravan"]
	fmt.Printf("node %s: caravan driver healthy=%v (%s)\n", n.Name, d.Healthy, d.HealthDescription)
	var keys []string
	for k := range n.Attributes {
		if strings.HasPrefix(k, "driver.caravan.") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("  %s = %s\n", k, n.Attributes[k])
	}
}

func submit(c *devcluster.Cluster, root string) error {
	specs := []struct {
		file string
		vars map[string]string
	}{
		{"shared-gpu.nomad.hcl", map[string]string{"hold_seconds": "20"}},
		{"train-digits.nomad.hcl", map[string]string{"workloads": devcluster.TaskWorkloads, "steps": "600", "step_sleep": "0.02"}},
	}
	for _, s := range specs {
		fmt.Printf("\n$ nomad job run jobspecs/%s\n", s.file)
		job, err := c.RunFile(filepath.Join(root, "jobspecs", s.file), s.vars)
		if err != nil {
			return err
		}
		// One job at a time, so the two halves of shared-gpu take a GPU
		// together before the trainer's quarter lands next to one of them.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err = c.WaitAlloc(ctx, *job.ID, started)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// started accepts an allocation whose tasks have all started (or finished).
func started(a *api.Allocation) bool {
	if len(a.TaskStates) == 0 {
		return false
	}
	for _, ts := range a.TaskStates {
		if ts.State == "pending" {
			return false
		}
	}
	return true
}

// watch prints each job's task states until every job is done or ctx ends.
func watch(ctx context.Context, c *devcluster.Cluster, jobs []string) {
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	for {
		done := true
		var line []string
		for _, id := range jobs {
			s, finished := jobState(c, id)
			done = done && finished
			line = append(line, id+": "+s)
		}
		fmt.Printf("[%s] %s\n", time.Now().Format("15:04:05"), strings.Join(line, " | "))
		if done {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func jobState(c *devcluster.Cluster, id string) (string, bool) {
	stubs, _, err := c.API.Jobs().Allocations(id, true, nil)
	if err != nil || len(stubs) == 0 {
		return "pending", false
	}
	var parts []string
	finished := true
	for _, s := range stubs {
		for task, ts := range s.TaskStates {
			parts = append(parts, fmt.Sprintf("%s=%s", task, ts.State))
			finished = finished && ts.State == "dead"
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ","), finished && len(parts) > 0
}

func showOutput(c *devcluster.Cluster) {
	for _, j := range []struct{ job, task string }{{"shared-gpu", "left"}, {"shared-gpu", "right"}, {"train-digits", "train"}} {
		a, err := firstAlloc(c, j.job)
		if err != nil {
			continue
		}
		out, _ := c.Logs(a, j.task, "stdout")
		fmt.Printf("\n--- %s/%s stdout ---\n%s", j.job, j.task, tail(out, 12))
	}
	if a, err := firstAlloc(c, "train-digits"); err == nil {
		p, _ := c.Cat(a, "alloc/caravan/train.progress.jsonl")
		lines := strings.Split(strings.TrimSpace(p), "\n")
		if len(lines) > 1 {
			fmt.Printf("\nprogress file: %d lines, first %s\n                         last  %s\n", len(lines), lines[0], lines[len(lines)-1])
		}
	}
}

func firstAlloc(c *devcluster.Cluster, job string) (*api.Allocation, error) {
	stubs, _, err := c.API.Jobs().Allocations(job, true, nil)
	if err != nil || len(stubs) == 0 {
		return nil, fmt.Errorf("no allocation for %s", job)
	}
	a, _, err := c.API.Allocations().Info(stubs[0].ID, nil)
	return a, err
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

func wait(ctx context.Context, after time.Duration) {
	if after > 0 {
		fmt.Printf("exiting in %s\n", after)
		select {
		case <-ctx.Done():
		case <-time.After(after):
		}
		return
	}
	fmt.Println("the agent keeps running; press Ctrl-C to stop everything")
	<-ctx.Done()
}
