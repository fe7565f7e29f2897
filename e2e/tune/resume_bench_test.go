package tune

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchSpec: SHA 4 → 2 → 1 over 40/80/160 steps; %s are the name and the
// checkpoint line.
const benchSpec = `
tune "%s" {
  job       = "tune-digits"
  metric    = "val_loss"
  algorithm = "sha"
  trials    = 4
  seed      = 7
  %s
  budget {
    min       = 40
    max       = 160
    reduction = 2
  }
  param "lr" {
    type = "log_uniform"
    min  = 0.02
    max  = 0.3
  }
  param "batch" {
    type   = "choice"
    values = [32, 64]
  }
  param "width" {
    type = "int"
    min  = 16
    max  = 64
  }
}
`

// BenchmarkTuneResumeLive runs the same digits search on a real Nomad agent
// twice, promoted trials retrained from scratch and resumed, and reports
// each one's wall time to the final rung. Steps sleep 100 ms (-step-sleep)
// so that training, not process start, dominates, as a GPU step would:
// from scratch trains 4·40 + 2·80 + 160 = 480 trial-steps, resume 320.
func BenchmarkTuneResumeLive(b *testing.B) {
	c := startTuneCluster(b, unisolated, 2)
	if _, err := c.RunFile(filepath.Join(repo, "jobspecs", "tune-digits.nomad.hcl"),
		map[string]string{"workloads": filepath.Join(repo, "workloads"), "node_pool": "default", "step_sleep": "0.1"}); err != nil {
		b.Fatal(err)
	}
	shared := b.TempDir()
	wall := map[string]float64{}
	for i := 0; i < b.N; i++ {
		modes := []string{"scratch", "resume"}
		if i%2 == 1 { // alternate, so neither always runs on a warmer cluster
			modes[0], modes[1] = modes[1], modes[0]
		}
		for _, mode := range modes {
			line := ""
			if mode == "resume" {
				line = fmt.Sprintf("checkpoint = %q", shared)
			}
			name := fmt.Sprintf("bench-%s-%d", mode, i)
			path := filepath.Join(b.TempDir(), name+".hcl")
			if err := os.WriteFile(path, []byte(fmt.Sprintf(benchSpec, name, line)), 0o644); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			p := startTuner(b, c, path)
			if err := p.cmd.Wait(); err != nil || !strings.Contains(p.out.String(), "best: trial") {
				b.Fatalf("%s: %v\n%s", mode, err, p.logs())
			}
			wall[mode] += time.Since(start).Seconds()
			b.Logf("%s: %s", mode, p.out.String()[strings.LastIndex(p.out.String(), "best:"):])
		}
	}
	for mode, s := range wall {
		b.ReportMetric(s/float64(b.N), mode+"-s") // mean wall time to the final rung
	}
}
