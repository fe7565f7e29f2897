package serve

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the front end's Prometheus series, on its own registry.
type metrics struct {
	requests   *prometheus.CounterVec   // by model, outcome
	queueDelay *prometheus.HistogramVec // arrival to dispatch, by model
	latency    *prometheus.HistogramVec // arrival to answer of met requests
	batchSize  *prometheus.HistogramVec
	batchTime  *prometheus.HistogramVec // measured batch round trip
	decision   *prometheus.HistogramVec // policy decision time
	workers    *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	lat := prometheus.ExponentialBuckets(0.001, 1.6, 24) // 1 ms .. ~50 s
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "caravan_serve_requests_total",
			Help: "Answered requests by outcome; outcome=\"ok\" are the requests served within their deadline (goodput).",
		}, []string{"model", "outcome"}),
		queueDelay: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "caravan_serve_queue_delay_seconds", Help: "Time from arrival to dispatch in a batch.", Buckets: lat,
		}, []string{"model"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "caravan_serve_latency_seconds", Help: "Arrival to answer, requests served within their deadline.", Buckets: lat,
		}, []string{"model"}),
		batchSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "caravan_serve_batch_size", Help: "Requests per dispatched batch.", Buckets: prometheus.ExponentialBuckets(1, 2, 8),
		}, []string{"model"}),
		batchTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "caravan_serve_batch_seconds", Help: "Measured batch latency at the front end.", Buckets: lat,
		}, []string{"model"}),
		decision: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "caravan_serve_decision_seconds", Help: "Time the batch policy takes per decision.",
			Buckets: prometheus.ExponentialBuckets(1e-6, 2, 20),
		}, []string{"model", "policy"}),
		workers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "caravan_serve_workers", Help: "Known workers per model.",
		}, []string{"model"}),
	}
	reg.MustRegister(m.requests, m.queueDelay, m.latency, m.batchSize, m.batchTime, m.decision, m.workers)
	return m
}

// attainment registers the SLO attainment gauge: met / answered, per model.
func (m *metrics) attainment(reg prometheus.Registerer, model string) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "caravan_serve_slo_attainment",
		Help:        "Fraction of answered requests served within their deadline.",
		ConstLabels: prometheus.Labels{"model": model},
	}, func() float64 {
		ok := counterValue(m.requests.WithLabelValues(model, string(OutcomeOK)))
		all := 0.0
		for _, o := range allOutcomes {
			all += counterValue(m.requests.WithLabelValues(model, string(o)))
		}
		if all == 0 {
			return 0
		}
		return ok / all
	}))
}
