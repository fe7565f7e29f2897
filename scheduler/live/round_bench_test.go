package live

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// BenchmarkRound measures the live scheduler's round without Nomad's
// latency: a mirror of N nodes × 8 GPUs, every GPU held by a running 1-GPU
// job, and 10 queued 1-GPU jobs per node that cannot fit (1,000 nodes:
// 18,000 jobs), under fifo. The fake Nomad answers every call with an
// empty object and counts them, so api-calls/op is what a round asks of
// Nomad.
//
//	go test -run '^$' -bench Round -benchtime 20x ./scheduler/live/
//
// "idle" rounds see no event; "k=N" rounds see N jobs change (a new
// version of a queued job, as an event brings it), so at a fixed number
// of jobs the round's cost should grow with k (issue #20); "full" rounds
// classify every job afresh, as the round after a reconcile and every
// fullEvery-th round do (the reads of the reconcile aside). cpu-ms/op is
// the process's CPU per round, the garbage collector's included.
func BenchmarkRound(b *testing.B) {
	for _, nodes := range []int{100, 300, 1000} {
		for _, k := range []int{0, 1, 10, 100, 1000, -1} {
			mode := "idle"
			switch {
			case k > 0:
				mode = fmt.Sprintf("k=%d", k)
			case k < 0:
				mode = "full"
			}
			b.Run(fmt.Sprintf("nodes=%d/%s", nodes, mode), func(b *testing.B) {
				s, calls := benchScheduler(b, nodes, 10*nodes)
				if _, err := s.round(); err != nil {
					b.Fatal(err)
				}
				if k < 0 {
					s.fullEvery = 0
				}
				c0, cpu0 := calls.Load(), cpuTime()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for c := 0; c < k; c++ {
						benchChange(s.mirror, fmt.Sprintf("q%d", (i*k+c)%(10*nodes)))
					}
					if _, err := s.round(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(calls.Load()-c0)/float64(b.N), "api-calls/op")
				b.ReportMetric((cpuTime()-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// cpuTime is the process's user and system CPU time so far (the garbage
// collector's included, which wall time per op hides on an idle core).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchChange puts a new stub of a job into the mirror, as a job event
// does (same job version, so the full job stays cached).
func benchChange(m *mirror, id string) {
	j := *m.jobs[id]
	j.ModifyIndex = m.index + 1
	m.index++
	m.putJob(&j)
}

// benchScheduler builds a leader whose mirror holds the cluster and whose
// job cache holds every full job, so a round reads nothing but what it
// chooses to.
func benchScheduler(b *testing.B, nodes, queued int) (*Scheduler, *atomic.Int64) {
	b.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("X-Nomad-Index", "1")
		_, _ = w.Write([]byte("{}"))
	}))
	b.Cleanup(srv.Close)
	c, err := api.NewClient(&api.Config{Address: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(Config{Token: "t", Policy: "fifo", ReconcileEvery: time.Hour}, c, nil)
	if err != nil {
		b.Fatal(err)
	}
	m := newMirror()
	m.pools["default"] = true
	// Submitted a microsecond apart just now: long-waiting jobs would be
	// parked (park.go), a write per job that would then dominate a round.
	base := time.Now().Add(-time.Second).UnixNano()
	add := func(id string, stub *jobStub) {
		stub.ID, stub.Namespace, stub.Type, stub.Status = id, "default", "batch", "running"
		stub.JobModifyIndex, stub.ModifyIndex, stub.CreateIndex = 10, 10, 10
		m.jobs[id] = stub
		job := testJob(id, map[string]any{"command": "x", "gpus": 1})
		g, err := parseGang(job)
		if err != nil {
			b.Fatal(err)
		}
		s.jobs[id] = &cachedJob{index: 10, job: job, gang: g}
	}
	for n := 0; n < nodes; n++ {
		id := fmt.Sprintf("node-%04d-0000-0000-0000-000000000000", n)
		info := &nodeInfo{ID: id, Name: fmt.Sprintf("sim-%d", n), Pool: "default", Datacenter: "dc1"}
		for g := 0; g < 8; g++ {
			info.GPUs = append(info.GPUs, nodeGPU{Index: g, UUID: fmt.Sprintf("GPU-%d-%d", n, g), MemoryMiB: 81920, FreeFraction: 1, FreeMemMiB: 81920})
			jid := fmt.Sprintf("r%d-%d", n, g)
			ts := []target{{Worker: worker{Group: "w0", Task: "work"}, NodeID: id, GPU: g, UUID: info.GPUs[g].UUID, Fraction: 1}}
			add(jid, &jobStub{NodePool: "default", SubmitTime: base + int64(n*8+g)*1e3,
				Meta: map[string]string{MetaAdmitted: "2026-01-01T00:00:00Z", MetaPlacement: encodePlacement(ts)}})
			m.allocs[jid] = &api.AllocationListStub{ID: "a-" + jid, JobID: jid, DesiredStatus: "run", ClientStatus: "running", CreateIndex: 10}
		}
		m.nodes[id] = info
	}
	for q := 0; q < queued; q++ {
		add(fmt.Sprintf("q%d", q), &jobStub{NodePool: "caravan-queue", Status: "pending", SubmitTime: base + int64(nodes*8+q)*1e3})
	}
	m.index, m.fresh = 10, 10
	s.st, s.mirror, s.feed, s.reconciledAt, s.poolsChecked = newState(), m, newFeed(), time.Now(), time.Now()
	return s, &calls
}
