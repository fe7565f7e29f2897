package registry

import (
	"math"
	"strings"
	"testing"
)

func TestParseQueueLimits(t *testing.T) {
	good := map[string][]float64{"": nil, " ": nil, "4": {4}, "3250, 7200,18000": {3250, 7200, 18000}, "0.5,1e3": {0.5, 1000}}
	for in, want := range good {
		got, err := ParseQueueLimits(in)
		if err != nil || len(got) != len(want) {
			t.Fatalf("%q: %v %v", in, got, err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%q: %v, want %v", in, got, want)
			}
		}
	}
	for _, in := range []string{"x", "1,x", "0", "-1", "NaN", "Inf", "5,3", "4,4", "1,,2"} {
		if _, err := ParseQueueLimits(in); err == nil || !strings.Contains(err.Error(), QueueLimitsFlag) {
			t.Errorf("%q: want an error naming %s, got %v", in, QueueLimitsFlag, err)
		}
	}
	var c Config
	c.SetQueueLimits([]float64{4, 40})
	if c.Queues.Queues != 3 || len(c.Queues.Limits) != 2 {
		t.Fatalf("SetQueueLimits: %+v", c.Queues)
	}
}

func FuzzParseQueueLimits(f *testing.F) {
	for _, s := range []string{"", "4", "3250,7200,18000", "1,x", "5,3", "NaN", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ls, err := ParseQueueLimits(s)
		if err != nil {
			return
		}
		for i, l := range ls {
			if !(l > 0) || math.IsInf(l, 0) || (i > 0 && l <= ls[i-1]) {
				t.Fatalf("%q accepted as %v", s, ls)
			}
		}
	})
}
