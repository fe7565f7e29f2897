package e2e

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// BenchmarkStartLatency measures the time from registering a job to its task
// running, for the caravan driver (isolated, with a GPU fraction), for
// raw_exec (no isolation) and for Nomad's exec (chroot isolation, like
// caravan's default), in the same agent, alternating so all see the same
// machine load. It reports each median and caravan's ratio to each.
func BenchmarkStartLatency(b *testing.B) {
	drivers := []struct{ name, config string }{
		{"caravan", `command = "/bin/sleep"
        args = ["30"]
        gpu_fraction = 0.1`},
		{"raw_exec", `command = "/bin/sleep"
        args = ["30"]`},
		{"exec", `command = "/bin/sleep"
        args = ["30"]`},
	}
	lat := map[string][]time.Duration{}
	for i := 0; i < b.N; i++ {
		for _, d := range drivers {
			l, err := startLatency(b, fmt.Sprintf("lat-%s-%d", d.name, i), d.name, d.config)
			if err != nil {
				b.Fatal(err)
			}
			lat[d.name] = append(lat[d.name], l)
		}
	}
	c, r, e := median(lat["caravan"]), median(lat["raw_exec"]), median(lat["exec"])
	b.ReportMetric(float64(c.Milliseconds()), "caravan-ms")
	b.ReportMetric(float64(r.Milliseconds()), "raw_exec-ms")
	b.ReportMetric(float64(e.Milliseconds()), "exec-ms")
	b.ReportMetric(float64(c)/float64(r), "ratio")
	b.ReportMetric(float64(c)/float64(e), "ratio-exec")
}

func startLatency(b *testing.B, id, driver, config string) (time.Duration, error) {
	hcl := fmt.Sprintf(`
job %q {
  type = "batch"
  group "g" {
    task "t" {
      driver = %q
      config {
        %s
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`, id, driver, config)
	job, err := cluster.API.Jobs().ParseHCL(hcl, true)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	if _, _, err := cluster.API.Jobs().Register(job, nil); err != nil {
		return 0, err
	}
	a, err := cluster.WaitAlloc(within(b, 60*time.Second), id, harness.TaskState("t", "running"))
	if err != nil {
		return 0, err
	}
	started := a.TaskStates["t"].StartedAt
	stopJob(b, id)
	return started.Sub(t0), nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
