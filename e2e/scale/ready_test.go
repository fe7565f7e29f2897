package scale

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitFirstRound waits until the scheduler at addr has finished a round.
// Leading starts with a full reconcile that reads every node (1,000 here):
// jobs submitted before it ends wait for it, and that one-off start would
// count as placement time (it put a minute on the first jobs at 1,000
// nodes). The start is printed on its own instead.
func waitFirstRound(addr string, since time.Time, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		r, err := scrapeRounds(addr, "scale")
		if err == nil && r.rounds >= 1 {
			fmt.Printf("scheduler's first round done %s after it started (leading, full reconcile of every node)\n",
				time.Since(since).Round(100*time.Millisecond))
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the scheduler finished no round within %s (%v)", within, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// slowRounds is the scheduler log's "slow round" lines (rounds over 1 s,
// each with its stages), the first max of them and how many in all.
func slowRounds(logPath string, max int) string {
	raw, err := os.ReadFile(logPath)
	if err != nil {
		return fmt.Sprintf("slow rounds: reading the scheduler log: %v\n", err)
	}
	var lines []string
	n := 0
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.Contains(l, "slow round") {
			if n++; n <= max {
				lines = append(lines, "  "+l)
			}
		}
	}
	return fmt.Sprintf("slow rounds (over 1 s): %d\n%s", n, strings.Join(append(lines, ""), "\n"))
}

// keepLog copies the scheduler's log into dir (CARAVAN_SCALE_PPROF) as
// scheduler-<nodes>.log before the cluster's directory is removed.
func keepLog(logPath, dir string, nodes int) {
	in, err := os.Open(logPath)
	if err != nil {
		return
	}
	defer func() { _ = in.Close() }()
	out, err := os.Create(filepath.Join(dir, fmt.Sprintf("scheduler-%d.log", nodes)))
	if err != nil {
		return
	}
	defer func() { _ = out.Close() }()
	_, _ = io.Copy(out, in)
}

// serverConfig is the server block's extra settings:
// CARAVAN_SCALE_SCHEDULERS=n sets num_schedulers (Nomad's default is one
// per core); CARAVAN_SCALE_HEARTBEATS=n sets max_heartbeats_per_second
// (default 50: 1,000 nodes heartbeat every 20 s, each an RPC whose node
// identity the server verifies, RSA).
func serverConfig() string {
	cfg := ""
	if n := envInt("CARAVAN_SCALE_SCHEDULERS", 0); n > 0 {
		cfg += fmt.Sprintf("num_schedulers = %d\n", n)
	}
	if n := envInt("CARAVAN_SCALE_HEARTBEATS", 0); n > 0 {
		cfg += fmt.Sprintf("max_heartbeats_per_second = %d\n", n)
	}
	return cfg
}

// clusterDir is where the server keeps its Raft log, "" for a temp dir.
// CARAVAN_SCALE_DIR=/dev/shm puts it in memory: on this machine the disk
// is shared with other agents' builds, and every admitted job waits on
// Raft commits (fsyncs) several times.
func clusterDir(b *testing.B) string {
	parent := os.Getenv("CARAVAN_SCALE_DIR")
	if parent == "" {
		return ""
	}
	d, err := os.MkdirTemp(parent, "caravan-scale-")
	if err != nil {
		b.Fatal(err)
	}
	return d
}
