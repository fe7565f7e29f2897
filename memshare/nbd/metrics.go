package nbd

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts and times requests; nil Metrics observe nothing.
type Metrics struct {
	latency *prometheus.HistogramVec
	bytes   *prometheus.CounterVec
	errors  *prometheus.CounterVec
}

// NewMetrics registers request metrics under namespace_subsystem_* on reg.
func NewMetrics(reg prometheus.Registerer, namespace, subsystem string) *Metrics {
	m := &Metrics{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "request_seconds",
			Help:    "NBD request service time by command.",
			Buckets: prometheus.ExponentialBuckets(5e-6, 2.5, 14),
		}, []string{"op"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "bytes_total",
			Help: "Bytes read or written through NBD.",
		}, []string{"op"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "errors_total",
			Help: "NBD requests answered with an error.",
		}, []string{"op"}),
	}
	reg.MustRegister(m.latency, m.bytes, m.errors)
	return m
}

var opNames = map[uint16]string{cmdRead: "read", cmdWrite: "write", cmdFlush: "flush", cmdTrim: "trim"}

func (m *Metrics) observe(typ uint16, n uint32, start time.Time, err error) {
	if m == nil {
		return
	}
	op := opNames[typ]
	m.latency.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err != nil {
		m.errors.WithLabelValues(op).Inc()
		return
	}
	if typ == cmdRead || typ == cmdWrite {
		m.bytes.WithLabelValues(op).Add(float64(n))
	}
}
