package tune

import (
	"strings"
	"testing"
)

func TestMetricAt(t *testing.T) {
	data := []byte(`{"step":10,"loss":2.0}
not json
{"step":20,"loss":1.5,"val_loss":1.7}
{"step":30,"loss":"x"}
{"step":40,"loss":1.0}
{"step":50,"loss":0.9`)
	if v, s, err := MetricAt(data, "loss", 20); err != nil || v != 1.5 || s != 20 {
		t.Fatalf("at 20: %v %v %v", v, s, err)
	}
	if v, s, err := MetricAt(data, "loss", 100); err != nil || v != 1.0 || s != 40 {
		t.Fatalf("past the end: %v %v %v", v, s, err)
	}
	if _, _, err := MetricAt(data, "accuracy", 10); err == nil || !strings.Contains(err.Error(), `metric "accuracy" missing`) {
		t.Fatalf("missing metric: %v", err)
	}
}

func FuzzMetricAt(f *testing.F) {
	f.Add([]byte(`{"step":1,"loss":0.5}`+"\n"), "loss", 1.0)
	f.Add([]byte("\n\n{"), "x", -1.0)
	f.Fuzz(func(t *testing.T, data []byte, metric string, budget float64) {
		_, _, _ = MetricAt(data, metric, budget)
	})
}
