package scale

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// telemetryConfig makes the Nomad server expose Prometheus metrics, whose
// counters are cumulative (the JSON form keeps only the last minute).
// CARAVAN_SCALE_METRICS_INTERVAL sets its collection_interval (default
// 1s): every interval the leader sets seven gauges per task group of
// every job it holds, a third of its CPU at 10,000 jobs.
func telemetryConfig() string {
	interval := ""
	if v := os.Getenv("CARAVAN_SCALE_METRICS_INTERVAL"); v != "" {
		interval = fmt.Sprintf("  collection_interval = %q\n", v)
	}
	return "telemetry {\n  prometheus_metrics = true\n  disable_hostname = true\n" + interval + "}\n"
}

// serverWork are the server metrics that say what it committed through
// Raft and how long a register took inside it: FSM applies by message
// type, Raft commit and store times, the register endpoint, blocked evals,
// and the clients' heartbeats, allocation watches and updates.
var serverWork = regexp.MustCompile(`^nomad_(nomad_fsm_[a-z_]+|raft_(commitTime|fsm_apply|boltdb_storeLogs|boltdb_logBatchSize|rpc_appendEntries_storeLogs|leader_dispatchLog)|nomad_job_register|nomad_plan_(submit|evaluate|apply)|nomad_client_(update_status|get_client_allocs|update_alloc)|nomad_variables_apply(_[a-z_]+)?|nomad_blocked_evals_total_[a-z_]+|nomad_broker_total_[a-z]+|nomad_worker_[a-z_]+|nomad_eval_[a-z_]+)(_count|_sum)?(\{quantile="0.9"\})? `)

// serverMetrics reads the server's Prometheus metrics and keeps those of
// serverWork, one "name value" a line, sorted.
func serverMetrics(c *harness.Cluster) (string, error) {
	resp, err := http.Get(c.Server.HTTPAddr + "/v1/metrics?format=prometheus")
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var keep []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := sc.Text(); serverWork.MatchString(l) {
			keep = append(keep, l)
		}
	}
	sort.Strings(keep)
	return strings.Join(keep, "\n") + "\n", sc.Err()
}

// latencies summarises register call times: p50, p90, p99, max and sum.
func latencies(d []time.Duration) string {
	if len(d) == 0 {
		return "none"
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum time.Duration
	for _, x := range s {
		sum += x
	}
	q := func(p float64) time.Duration { return s[int(p*float64(len(s)-1))].Round(time.Millisecond) }
	return fmt.Sprintf("n %d, p50 %s, p90 %s, p99 %s, max %s, sum %s", len(s), q(0.5), q(0.9), q(0.99),
		s[len(s)-1].Round(time.Millisecond), sum.Round(time.Second))
}

// goroutineDump saves the server's goroutines (with stacks) as
// <dir>/goroutines-<mode>-<n>.txt, taken while a register is in flight.
func goroutineDump(c *harness.Cluster, dir, mode string, n int) {
	resp, err := http.Get(c.Server.HTTPAddr + "/v1/agent/pprof/goroutine?debug=2")
	if err != nil {
		return
	}
	defer func() { _ = resp.Body.Close() }()
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("goroutines-%s-%04d.txt", mode, n)))
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	_, _ = io.Copy(f, resp.Body)
}

// wakeLag measures, until stop closes, how late a 10 ms sleep in this
// process wakes: the run-queue wait of the benchmark's own goroutines
// (the submitting loop shares the process with the simulated clients).
func wakeLag(stop <-chan struct{}) <-chan []time.Duration {
	out := make(chan []time.Duration, 1)
	go func() {
		var lag []time.Duration
		for {
			select {
			case <-stop:
				out <- lag
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(10 * time.Millisecond)
			lag = append(lag, time.Since(t0)-10*time.Millisecond)
		}
	}()
	return out
}

// noteAddr writes the server's HTTP address and this process's pid to
// <dir>/nomad-<mode>.addr, for probes run beside the benchmark.
func noteAddr(c *harness.Cluster, dir, mode string) {
	_ = os.WriteFile(filepath.Join(dir, "nomad-"+mode+".addr"),
		fmt.Appendf(nil, "%s %d %d\n", c.Server.HTTPAddr, os.Getpid(), c.Server.Pid()), 0o644)
}
