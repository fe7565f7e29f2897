package aggsvc

import (
	"fmt"
	"testing"
)

// BenchmarkDDPStep trains the DDP workload with two real PyTorch ranks,
// through aggsvc (in-process server, loopback) and through gloo all-reduce
// in lockstep on the same batches, and reports both mean step times.
//
//	go test -run '^$' -bench DDPStep -benchtime 1x ./aggsvc
func BenchmarkDDPStep(b *testing.B) {
	needTorch(b)
	for _, hidden := range []int{64, 1024} {
		b.Run(fmt.Sprintf("hidden=%d", hidden), func(b *testing.B) {
			s := startServer(b, nil)
			job := fmt.Sprintf("default/bench-ddp-%d", hidden)
			env := []string{"CARAVAN_AGGREGATOR_ADDRS=" + s.Addr().String(), "CARAVAN_AGGREGATOR_JOB=" + job,
				"CARAVAN_AGGREGATOR_TOKEN=" + JobToken(testKey, job)}
			for b.Loop() {
				res := runDDP(b, env, "--mode", "compare", "--steps", "40", "--hidden", fmt.Sprint(hidden))
				b.ReportMetric(float64(res.Params), "params")
				b.ReportMetric(res.StepSeconds["aggsvc"]*1e3, "aggsvc_step_ms")
				b.ReportMetric(res.StepSeconds["gloo"]*1e3, "gloo_step_ms")
				b.ReportMetric(res.StepSeconds["aggsvc"]/res.StepSeconds["gloo"], "aggsvc/gloo")
			}
		})
	}
}
