package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/caravan-dl/caravan/internal/devcluster"
	"github.com/caravan-dl/caravan/scheduler/live"
)

// queuedJob is one job of the mixed workload sent through the scheduler.
type queuedJob struct {
	id, file string
	vars     map[string]string
}

// runScheduled starts `caravan scheduler` against the demo agent, submits a
// small mixed workload into the caravan-queue pool and prints the queue as
// it drains.
func runScheduled(ctx context.Context, c *devcluster.Cluster, root string) error {
	addr, token, err := listenAddr()
	if err != nil {
		return err
	}
	stop, err := startScheduler(c, root, addr, token)
	if err != nil {
		return err
	}
	defer stop()
	if err := waitPool(ctx, c, "caravan-queue"); err != nil {
		return err
	}
	work := devcluster.TaskWorkloads
	jobs := []queuedJob{
		{"gang-long", "sched-train.nomad.hcl", map[string]string{"workloads": work, "seconds": "40"}},
		{"gang-short", "sched-train.nomad.hcl", map[string]string{"workloads": work, "seconds": "15"}},
		{"gang-mid", "sched-train.nomad.hcl", map[string]string{"workloads": work, "seconds": "25"}},
		{"digits", "train-digits.nomad.hcl", map[string]string{"workloads": work, "steps": "400", "step_sleep": "0.02"}},
	}
	for _, j := range jobs {
		fmt.Printf("$ nomad job run jobspecs/%s   (as %s, node_pool = \"caravan-queue\")\n", j.file, j.id)
		if err := submitQueued(c, root, j); err != nil {
			return err
		}
	}
	return drain(ctx, c, addr, token, jobs)
}

func listenAddr() (string, string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", err
	}
	addr := l.Addr().String()
	l.Close()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	return addr, hex.EncodeToString(b), nil
}

func startScheduler(c *devcluster.Cluster, root, addr, token string) (func(), error) {
	logPath := filepath.Join(c.Dir, "scheduler.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(root, "bin", "caravan"), "scheduler",
		"-policy", "tiresias-las", "-listen", addr, "-quantum", "2s")
	cmd.Env = append(os.Environ(), "NOMAD_ADDR="+c.Server.HTTPAddr, "CARAVAN_SCHEDULER_TOKEN="+token)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start caravan scheduler (run `make build`): %w", err)
	}
	fmt.Printf("\nstarted `caravan scheduler -policy tiresias-las` (log in %s)\n", logPath)
	return func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }() // its log says how it ended
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		logf.Close()
	}, nil
}

// submitQueued parses a jobspec through the agent, renames it and puts it in
// the queue pool, as a user's copy of the example would be.
func submitQueued(c *devcluster.Cluster, root string, j queuedJob) error {
	b, err := os.ReadFile(filepath.Join(root, "jobspecs", j.file))
	if err != nil {
		return err
	}
	var vars strings.Builder
	for k, v := range j.vars {
		fmt.Fprintf(&vars, "%s = %q\n", k, v)
	}
	job, err := c.API.Jobs().ParseHCLOpts(&api.JobsParseRequest{JobHCL: string(b), Variables: vars.String(), Canonicalize: true})
	if err != nil {
		return fmt.Errorf("%s: %w", j.file, err)
	}
	job.ID, job.Name, job.NodePool = &j.id, &j.id, ptr("caravan-queue")
	_, _, err = c.API.Jobs().Register(job, nil)
	return err
}

func ptr[T any](v T) *T { return &v }

// waitPool waits for the scheduler to have created its queue pool.
func waitPool(ctx context.Context, c *devcluster.Cluster, name string) error {
	for i := 0; i < 300; i++ {
		if _, _, err := c.API.NodePools().Info(name, nil); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("the scheduler did not create node pool %q (see its log)", name)
}

// drain prints the scheduler's queue every few seconds until all jobs ended.
func drain(ctx context.Context, c *devcluster.Cluster, addr, token string, jobs []queuedJob) error {
	tick := time.NewTicker(4 * time.Second)
	defer tick.Stop()
	deadline := time.Now().Add(6 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		view, _, err := live.FetchQueue(qctx, "http://"+addr, token)
		cancel()
		fmt.Printf("\n[%s] caravan queue\n", time.Now().Format("15:04:05"))
		if err != nil {
			fmt.Println("  (scheduler not answering yet:", err, ")")
			continue
		}
		live.PrintQueue(os.Stdout, view)
		if allDone(c, jobs) {
			fmt.Println("\nthe queue has drained: every job ran to completion")
			return nil
		}
	}
	return fmt.Errorf("the queue did not drain in time")
}

func allDone(c *devcluster.Cluster, jobs []queuedJob) bool {
	for _, j := range jobs {
		job, _, err := c.API.Jobs().Info(j.id, nil)
		if err != nil || job.Status == nil || *job.Status != "dead" {
			return false
		}
	}
	return true
}
