package registry

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// QueueLimitsFlag is the one name of the Tiresias queue-limits setting in
// every command (`caravan sim --queue-limits`, `caravan scheduler
// -queue-limits`).
const QueueLimitsFlag = "queue-limits"

// ParseQueueLimits reads Tiresias queue limits in GPU-seconds, e.g.
// "3250,7200,18000": positive, finite and increasing. "" means the
// policy's defaults (nil). Errors name the flag and the bad value.
func ParseQueueLimits(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: %q is not a positive number of GPU-seconds", QueueLimitsFlag, f)
		}
		if n := len(out); n > 0 && v <= out[n-1] {
			return nil, fmt.Errorf("%s: limits must increase, got %g after %g", QueueLimitsFlag, v, out[n-1])
		}
		out = append(out, v)
	}
	return out, nil
}

// SetQueueLimits configures Tiresias' queues from limits: one queue more
// than limits. nil keeps the defaults.
func (c *Config) SetQueueLimits(limits []float64) {
	if len(limits) == 0 {
		return
	}
	c.Queues.Limits = limits
	c.Queues.Queues = len(limits) + 1
}
