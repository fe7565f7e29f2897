package serve

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Outcome is how a request ended; every request gets exactly one.
type Outcome string

const (
	// OutcomeOK: served within its deadline (the only outcome that counts as met).
	OutcomeOK Outcome = "ok"
	// OutcomeUnmeetable: answered early, before its deadline, because the
	// scheduler judged it could no longer meet it.
	OutcomeUnmeetable Outcome = "deadline_unmeetable"
	// OutcomeExceeded: its deadline passed first (answered at the deadline;
	// a result arriving later is discarded).
	OutcomeExceeded Outcome = "deadline_exceeded"
	// OutcomeWorkerFailed: its worker failed and no retry could be made.
	OutcomeWorkerFailed Outcome = "worker_failed"
	// OutcomeNoWorkers: the model has no worker.
	OutcomeNoWorkers Outcome = "no_workers"
	// OutcomeOverloaded: the model's queue was full at admission.
	OutcomeOverloaded Outcome = "overloaded"
	// OutcomeCanceled: the client went away.
	OutcomeCanceled Outcome = "canceled"
)

var allOutcomes = []Outcome{OutcomeOK, OutcomeUnmeetable, OutcomeExceeded, OutcomeWorkerFailed, OutcomeNoWorkers, OutcomeOverloaded, OutcomeCanceled}

// httpStatus maps an outcome to the HTTP status the client sees.
func (o Outcome) httpStatus() int {
	switch o {
	case OutcomeOK:
		return http.StatusOK
	case OutcomeUnmeetable, OutcomeExceeded:
		return http.StatusGatewayTimeout
	case OutcomeOverloaded:
		return http.StatusTooManyRequests
	case OutcomeCanceled:
		return 499 // client closed request (nginx's convention); nobody reads it
	default:
		return http.StatusServiceUnavailable
	}
}

// Response is the JSON answer to an inference request.
type Response struct {
	ID      string          `json:"id,omitempty"`
	Status  Outcome         `json:"status"`
	Detail  string          `json:"detail,omitempty"`
	Output  json.RawMessage `json:"output,omitempty"`
	Worker  string          `json:"worker,omitempty"`
	QueueMS float64         `json:"queue_ms"`
	TotalMS float64         `json:"total_ms"`
	Batch   int             `json:"batch,omitempty"`
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if c.Write(&m) != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

func histogramCount(o prometheus.Observer) uint64 {
	var m dto.Metric
	if h, ok := o.(prometheus.Metric); !ok || h.Write(&m) != nil {
		return 0
	}
	return m.GetHistogram().GetSampleCount()
}
