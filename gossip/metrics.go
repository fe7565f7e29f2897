package gossip

import (
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	msgsIn       *prometheus.CounterVec // by kind
	bytesIn      prometheus.Counter
	bytesOut     prometheus.Counter
	dropped      *prometheus.CounterVec // by reason
	members      prometheus.Gauge
	probes       *prometheus.CounterVec // by outcome
	probeBW      prometheus.Histogram
	probeTime    prometheus.Histogram
	mergeLatency prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		msgsIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "caravan_gossip_messages_received_total", Help: "Gossip messages received, by kind.",
		}, []string{"kind"}),
		bytesIn: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "caravan_gossip_received_bytes_total", Help: "Bytes of gossip payload received (broadcasts and push-pull).",
		}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "caravan_gossip_sent_bytes_total", Help: "Bytes of gossip payload sent (broadcasts and push-pull).",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "caravan_gossip_messages_dropped_total", Help: "Gossip messages dropped, by reason.",
		}, []string{"reason"}),
		members: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "caravan_gossip_members", Help: "Alive gossip members, this one included.",
		}),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "caravan_gossip_probes_total", Help: "Bandwidth probes, by outcome.",
		}, []string{"outcome"}),
		probeBW: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "caravan_gossip_probe_bandwidth_bytes_per_second", Help: "Measured probe throughput.",
			Buckets: prometheus.ExponentialBuckets(1e6, 2, 16),
		}),
		probeTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "caravan_gossip_probe_duration_seconds", Help: "Duration of one bandwidth probe.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
		mergeLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "caravan_gossip_merge_duration_seconds", Help: "Time to decode and merge one gossip message.",
			Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12),
		}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.msgsIn, m.bytesIn, m.bytesOut, m.dropped, m.members, m.probes, m.probeBW, m.probeTime, m.mergeLatency} {
			_ = reg.Register(c)
		}
	}
	return m
}
