package scale

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"

	"github.com/caravan-dl/caravan/e2e/harness"
	"github.com/caravan-dl/caravan/internal/devcluster"
	"github.com/caravan-dl/caravan/internal/nodesim"
)

// BenchmarkScale submits the same gang mix straight to Nomad and through
// `caravan scheduler -policy fifo`, each on a fresh server with the same
// simulated nodes, and prints one row per mode.
func BenchmarkScale(b *testing.B) {
	nodes := envInt("CARAVAN_SCALE_NODES", 100)
	jobs := envInt("CARAVAN_SCALE_JOBS", 1000)
	gangs := mix(jobs, 1)
	backlog = backlogGangs(envInt("CARAVAN_SCALE_BACKLOG", 0))
	modes := os.Getenv("CARAVAN_SCALE_MODES") // "nomad", "caravan" or both (empty)
	for i := 0; i < b.N; i++ {
		if len(backlog) > 0 || os.Getenv(variantsEnv) != "" {
			runVariants(b, nodes, gangs, modes)
			continue
		}
		var direct, viaCaravan result
		if modes != "caravan" {
			direct = runMode(b, nodes, gangs, false)
		}
		if modes != "nomad" {
			viaCaravan = runMode(b, nodes, gangs, true)
		}
		fmt.Printf("\n%d nodes × 8 GPUs, %d gang jobs (%d workers)\n", nodes, jobs, workers(gangs))
		fmt.Println(header)
		fmt.Printf("submitting took %s straight to Nomad, %s into the queue (one register at a time)\n",
			direct.submitSpan.Round(time.Second), viaCaravan.submitSpan.Round(time.Second))
		if modes != "caravan" {
			fmt.Println(direct.row("nomad directly"))
			b.ReportMetric(direct.jobsPerSec(), "nomad-jobs/s")
		}
		if modes == "nomad" {
			continue
		}
		fmt.Println(viaCaravan.row("caravan scheduler"))
		if modes == "" {
			fmt.Printf("ratio of placement rates (caravan ÷ nomad): %.2f\n", viaCaravan.jobsPerSec()/direct.jobsPerSec())
		}
		fmt.Printf("scheduler: %s, %.1f KiB from Nomad per round\n", viaCaravan.rounds,
			float64(viaCaravan.apiBytes)/1024/max(viaCaravan.rounds.rounds, 1))
		fmt.Printf("scheduler's Nomad API calls by endpoint:\n%s", viaCaravan.endpoints)
		b.ReportMetric(viaCaravan.jobsPerSec(), "caravan-jobs/s")
		b.ReportMetric(viaCaravan.rounds.p99, "round-p99-s")
	}
}

const header = "mode               jobs/s  workers/s  submit→running p50  p99     server CPU s  scheduler CPU s  scheduler RSS MiB  sched API calls  sched API MiB"

// result is one mode's measurements.
type result struct {
	jobs, workers       int
	span                time.Duration // first submit → last job running
	p50, p99            time.Duration
	serverCPU, schedCPU float64
	schedRSS            float64
	apiCalls            int64 // the scheduler's requests to Nomad's HTTP API
	apiBytes            int64 // bytes Nomad sent the scheduler
	rounds              roundStats
	endpoints           string        // the busiest API endpoints, one a line
	submitSpan          time.Duration // the submitting loop alone
	backlog             string        // the standing queue's evaluation churn
	partial             bool          // cut at CARAVAN_SCALE_WITHIN: not every gang started
}

func (r result) jobsPerSec() float64 { return float64(r.jobs) / r.span.Seconds() }

func (r result) row(mode string) string {
	if r.partial {
		mode += " (cut)"
	}
	return fmt.Sprintf("%-18s %6.1f  %9.1f  %18s  %-7s %12.1f  %15.1f  %17.0f  %15d  %13.1f", mode, r.jobsPerSec(),
		float64(r.workers)/r.span.Seconds(), r.p50.Round(10*time.Millisecond), r.p99.Round(10*time.Millisecond),
		r.serverCPU, r.schedCPU, r.schedRSS, r.apiCalls, float64(r.apiBytes)/(1<<20))
}

func workers(gs []gang) int {
	n := 0
	for _, g := range gs {
		n += g.Workers
	}
	return n
}

// runMode starts a server and the simulated nodes, optionally the
// scheduler, submits every gang and waits until each has run.
func runMode(b *testing.B, nodes int, gangs []gang, queued bool) result {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := harness.Start(ctx, harness.Options{ServerOnly: true, Ready: 3 * time.Minute, Dir: clusterDir(b),
		ExtraConfig: "enable_debug = true\n" + telemetryConfig(), ServerConfig: serverConfig()})
	if err != nil {
		b.Fatal(err)
	}
	// The server goes first: Stop would otherwise purge every job one by
	// one, waiting on each one's allocations (hours at 10,000 jobs once
	// the simulated clients are gone); nothing of a simulated task
	// outlives its process.
	defer func() { _ = c.Server.Stop(15 * time.Second); _ = c.Stop(); _ = os.RemoveAll(c.Dir) }()
	set, err := nodesim.Start(nodesim.Config{Servers: []string{c.Server.RPCAddr}, Nodes: nodes, GPUs: 8, LogLevel: hclog.Error, CPUMHz: nodeCPU()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = set.Shutdown(); _ = os.RemoveAll(set.Dir) }()
	if err := waitNodes(c, nodes, 5*time.Minute); err != nil {
		b.Fatal(err)
	}
	if nodeAgentOn() {
		if err := startNodeAgent(c, nodes, 5*time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	var sched *exec.Cmd
	var counter *apiCounter
	var schedAddr string
	if queued {
		// CARAVAN_SCALE_PROXY=on counts the scheduler's calls through a
		// proxy; it runs in this process beside the simulated clients, so
		// each call then also waits for their CPU (~70 ms a register at
		// 300 nodes): count calls, do not time rates, with it.
		target := c.Server.HTTPAddr
		if os.Getenv("CARAVAN_SCALE_PROXY") == "on" {
			counter = startAPICounter(b, c.Server.HTTPAddr)
			defer counter.close()
			target = counter.addr
		}
		t0 := time.Now()
		sched, schedAddr = startScheduler(b, c, target)
		defer stopProc(sched)
		if dir := os.Getenv("CARAVAN_SCALE_PPROF"); dir != "" {
			defer keepLog(filepath.Join(c.Dir, "scheduler.log"), dir, nodes)
		}
		if err := waitFirstRound(schedAddr, t0, 5*time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	if len(backlog) > 0 {
		submitBacklog(b, c, queued)
	}
	cpu0 := procCPU(c.Server.Pid())
	var sched0 float64
	if sched != nil {
		sched0 = procCPU(sched.Process.Pid)
	}
	if dir := os.Getenv("CARAVAN_SCALE_PPROF"); dir != "" {
		go serverProfile(c, dir, queued)
		go clientsProfile(dir, queued)
		if sched != nil {
			go schedulerProfile(schedAddr, dir)
		}
	}
	t0, self0 := time.Now(), procCPU(os.Getpid())
	var submitted map[string]time.Time
	var regs []time.Duration
	if os.Getenv("CARAVAN_SCALE_SUBMIT") == "inproc" {
		submitted, regs = submit(b, c, gangs, queued)
	} else {
		submitted, regs = submitOut(b, c, gangs, queued)
	}
	submitSpan := time.Since(t0)
	fmt.Printf("register calls (queued=%v): %s\n", queued, latencies(regs))
	fmt.Printf("the simulated clients' process used %.1f CPU s while submitting took %s\n",
		procCPU(os.Getpid())-self0, submitSpan.Round(time.Second))
	if m, err := serverMetrics(c); err == nil {
		fmt.Printf("server after submitting (queued=%v):\n%s", queued, m)
	}
	// CARAVAN_SCALE_WITHIN (minutes, default 30) bounds the wait; a side
	// that does not finish reports what it started by then.
	started, cut := track(c, gangs, time.Duration(envInt("CARAVAN_SCALE_WITHIN", 30))*time.Minute)
	r := summarise(gangs, submitted, started, cut)
	r.submitSpan = submitSpan
	r.serverCPU = procCPU(c.Server.Pid()) - cpu0
	if m, err := serverMetrics(c); err == nil {
		fmt.Printf("server after placing (queued=%v):\n%s", queued, m)
	}
	if sched != nil {
		r.schedCPU = procCPU(sched.Process.Pid) - sched0
		r.schedRSS = procRSS(sched.Process.Pid)
		if counter != nil {
			r.apiCalls, r.apiBytes = counter.requests.Load(), counter.bytes.Load()
			r.endpoints = counter.top(12)
		}
		if r.rounds, err = scrapeRounds(schedAddr, "scale"); err != nil {
			b.Logf("reading the scheduler's round metrics: %v", err)
		}
	}
	// The row as soon as it is known (a large run's shutdown takes a while).
	fmt.Printf("%s\n%s\n  rounds: %s\n", header, r.row(fmt.Sprintf("queued=%v", queued)), r.rounds)
	fmt.Printf("per-job steps (queued=%v):\n%s", queued, jobTimeline(c, gangs, submitted, started, queued))
	if sched != nil {
		fmt.Print(slowRounds(filepath.Join(c.Dir, "scheduler.log"), 20))
	}
	r.backlog = backlogChurn(c)
	return r
}

func waitNodes(c *harness.Cluster, n int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		stubs, _, err := c.API.Nodes().List(nil)
		ready := 0
		if err == nil {
			for _, s := range stubs {
				if d := s.Drivers["caravan"]; s.Status == "ready" && d != nil && d.Healthy {
					ready++
				}
			}
		}
		if ready >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d simulated nodes ready (%v)", ready, n, err)
		}
		time.Sleep(time.Second)
	}
}

// startScheduler runs `caravan scheduler`, built from this tree (bin/ may
// be older), and returns it with the address of its HTTP API.
func startScheduler(b *testing.B, c *harness.Cluster, nomadAddr string) (*exec.Cmd, string) {
	bin, err := harness.BuildCaravan(c.Dir)
	if err != nil {
		b.Fatal(err)
	}
	ports, err := devcluster.FreePorts(1)
	if err != nil {
		b.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	logf, err := os.Create(filepath.Join(c.Dir, "scheduler.log"))
	if err != nil {
		b.Fatal(err)
	}
	args := []string{"scheduler", "-policy", "fifo", "-quantum", "2s", "-debounce", "100ms",
		"-listen", addr, "-token", "scale", "-log-level", "info"}
	if os.Getenv("CARAVAN_SCALE_PPROF") != "" {
		args = append(args, "-pprof") // schedulerProfile
	}
	// CARAVAN_SCALE_SCHED_ARGS adds flags, e.g. "-progress-interval 10m".
	args = append(args, strings.Fields(os.Getenv("CARAVAN_SCALE_SCHED_ARGS"))...)
	args = append(args, strings.Fields(variantArgs)...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NOMAD_ADDR="+nomadAddr)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	// It leads once it has created the queue pool.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if _, _, err := c.API.NodePools().Info("caravan-queue", nil); err == nil {
			return cmd, addr
		}
		if time.Now().After(deadline) {
			stopProc(cmd)
			b.Fatal("the scheduler never created the caravan-queue pool; log in " + logf.Name())
		}
	}
}

func stopProc(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
	}
}

// submit registers every gang as fast as the API takes them, recording
// when each register call began and how long it took. With
// CARAVAN_SCALE_PPROF it dumps the server's goroutines 100 ms into every
// 50th register.
func submit(b *testing.B, c *harness.Cluster, gangs []gang, queued bool) (map[string]time.Time, []time.Duration) {
	at := make(map[string]time.Time, len(gangs))
	took := make([]time.Duration, 0, len(gangs))
	dir, mode := os.Getenv("CARAVAN_SCALE_PPROF"), modeName(queued)
	var parses []time.Duration
	stop := make(chan struct{})
	lags := wakeLag(stop)
	defer func() {
		close(stop)
		fmt.Printf("parse calls (queued=%v): %s\n", queued, latencies(parses))
		fmt.Printf("10 ms sleeps in the benchmark process woke late by: %s\n", latencies(<-lags))
	}()
	if dir != "" {
		noteAddr(c, dir, mode)
	}
	for i, g := range gangs {
		p0 := time.Now()
		job, err := c.API.Jobs().ParseHCLOpts(&api.JobsParseRequest{JobHCL: g.hcl(queued), Canonicalize: true})
		if err != nil {
			b.Fatalf("parse %s: %v", g.ID, err)
		}
		parses = append(parses, time.Since(p0))
		if dir != "" && i%50 == 25 {
			time.AfterFunc(100*time.Millisecond, func() { goroutineDump(c, dir, mode, i) })
		}
		t0 := time.Now()
		if _, _, err := c.API.Jobs().Register(job, nil); err != nil {
			b.Fatalf("register %s: %v", g.ID, err)
		}
		took = append(took, time.Since(t0))
		at[g.ID] = t0
	}
	return at, took
}

// track polls all allocations until every gang has had all its workers
// started; a gang's start is its last worker's StartedAt.
// It returns when every gang has started, or at the deadline with the
// time it gave up (zero when all started).
func track(c *harness.Cluster, gangs []gang, within time.Duration) (map[string]time.Time, time.Time) {
	want := map[string]int{}
	for _, g := range gangs {
		want[g.ID] = g.Workers
	}
	started := map[string]time.Time{}
	deadline := time.Now().Add(within)
	// Starts are read from the tasks' StartedAt, so polling less often
	// changes no figure; listing 20,000 allocations every second would
	// load the server it measures.
	every := min(max(time.Duration(len(gangs))*time.Millisecond, time.Second), 10*time.Second)
	for len(started) < len(gangs) {
		if now := time.Now(); now.After(deadline) {
			fmt.Printf("only %d of %d jobs started within %s: the row counts those (rate over the whole wait; latencies of the rest count to the cut, as lower bounds)\n",
				len(started), len(gangs), within)
			return started, now
		}
		time.Sleep(every)
		stubs, _, err := c.API.Allocations().List(nil)
		if err != nil {
			continue
		}
		byJob := map[string]map[string]time.Time{}
		for _, a := range stubs {
			ts := a.TaskStates["t"]
			if ts == nil || ts.StartedAt.IsZero() || want[a.JobID] == 0 {
				continue
			}
			if byJob[a.JobID] == nil {
				byJob[a.JobID] = map[string]time.Time{}
			}
			if t, ok := byJob[a.JobID][a.TaskGroup]; !ok || ts.StartedAt.Before(t) {
				byJob[a.JobID][a.TaskGroup] = ts.StartedAt
			}
		}
		for id, groups := range byJob {
			if _, done := started[id]; done || len(groups) < want[id] {
				continue
			}
			var last time.Time
			for _, t := range groups {
				if t.After(last) {
					last = t
				}
			}
			started[id] = last
		}
	}
	return started, time.Time{}
}

// summarise reads the rates and latencies; with a cut (a side that did
// not finish), the gangs started by then over the whole wait, and the
// others' latencies up to the cut.
func summarise(gangs []gang, submitted, started map[string]time.Time, cut time.Time) result {
	r := result{partial: !cut.IsZero()}
	var first, last time.Time
	lat := make([]time.Duration, 0, len(gangs))
	for _, g := range gangs {
		s, st := submitted[g.ID], started[g.ID]
		if first.IsZero() || s.Before(first) {
			first = s
		}
		if st.IsZero() {
			st = cut
		} else {
			r.jobs++
			r.workers += g.Workers
		}
		if st.After(last) {
			last = st
		}
		lat = append(lat, st.Sub(s))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r.span = last.Sub(first)
	r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	return r
}

// procCPU is a process's user+system CPU seconds (Linux, 100 Hz ticks).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100
}

// procRSS is a process's peak resident memory in MiB.
func procRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
		return v
	}
	return def
}
