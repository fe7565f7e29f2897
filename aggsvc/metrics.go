package aggsvc

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the service's Prometheus series, on the server's registry.
type metrics struct {
	bytes      *prometheus.CounterVec // direction=in|out
	steps      *prometheus.CounterVec // job, result=ok|timeout|worker_lost|job_gone
	jobCPU     *prometheus.CounterVec // job
	queueDelay prometheus.Histogram
	latency    prometheus.Histogram
	rejected   *prometheus.CounterVec // reason
	jobs       prometheus.Gauge
	conns      prometheus.Gauge
	busy       prometheus.Counter
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aggsvc_bytes_total", Help: "Partition payload bytes received (in) and sent (out).",
		}, []string{"direction"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aggsvc_partitions_total", Help: "Partitions reduced, by job and outcome.",
		}, []string{"job", "result"}),
		jobCPU: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aggsvc_job_cpu_seconds_total", Help: "Pool CPU time spent on each job's summation.",
		}, []string{"job"}),
		queueDelay: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "aggsvc_queue_delay_seconds", Help: "Time a push waited for a pool core.",
			Buckets: prometheus.ExponentialBuckets(1e-5, 4, 10),
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "aggsvc_partition_latency_seconds", Help: "From a partition's first push to its result.",
			Buckets: prometheus.ExponentialBuckets(1e-4, 4, 10),
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "aggsvc_frames_rejected_total", Help: "Frames rejected, by reason.",
		}, []string{"reason"}),
		jobs:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "aggsvc_jobs", Help: "Registered jobs."}),
		conns: prometheus.NewGauge(prometheus.GaugeOpts{Name: "aggsvc_connections", Help: "Open connections."}),
		busy: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "aggsvc_pool_cpu_seconds_total", Help: "Pool CPU time over all jobs.",
		}),
	}
	reg.MustRegister(m.bytes, m.steps, m.jobCPU, m.queueDelay, m.latency, m.rejected, m.jobs, m.conns, m.busy)
	return m
}
