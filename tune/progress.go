package tune

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// maxLine bounds one progress line; longer ones are skipped.
const maxLine = 64 << 10

// MetricAt reads a progress file (JSON lines) and returns the metric of
// the first line whose step reaches budget, else of the last line that
// has the metric. A line that is not JSON, or lacks a finite number under
// the metric's key, is skipped; if no line has it, the error names the
// metric.
func MetricAt(data []byte, metric string, budget float64) (value, step float64, err error) {
	found := false
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) > maxLine {
			continue
		}
		var m map[string]any
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		v, ok := number(m[metric])
		if !ok {
			continue
		}
		s, _ := number(m["step"])
		value, step, found = v, s, true
		if s >= budget {
			break
		}
	}
	if !found {
		return 0, 0, fmt.Errorf("metric %q missing from the progress file", metric)
	}
	return value, step, nil
}

func number(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok && !math.IsNaN(f) && !math.IsInf(f, 0)
}
