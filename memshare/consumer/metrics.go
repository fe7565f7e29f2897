package consumer

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	deadSlabs, degradedReads, rebuilds, lostStripes, reclaims prometheus.Counter
	rebuildSeconds                                            prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	c := func(name, help string) prometheus.Counter {
		m := prometheus.NewCounter(prometheus.CounterOpts{Namespace: "caravan", Subsystem: "memshare_consumer", Name: name, Help: help})
		reg.MustRegister(m)
		return m
	}
	m := &metrics{
		deadSlabs:     c("dead_slabs_total", "Slabs that failed (donor gone, I/O error, lease lost)."),
		degradedReads: c("degraded_reads_total", "Reads decoded from parity or served from the backup file."),
		rebuilds:      c("rebuilds_total", "Slabs re-homed on another donor."),
		lostStripes:   c("lost_stripes_total", "Stripes that lost more slabs than parity covers."),
		reclaims:      c("reclaims_total", "Slabs moved because their donor reclaimed memory."),
		rebuildSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "caravan", Subsystem: "memshare_consumer", Name: "rebuild_seconds",
			Help: "Time to re-home one slab.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14),
		}),
	}
	reg.MustRegister(m.rebuildSeconds)
	return m
}
