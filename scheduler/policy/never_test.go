package policy_test

import (
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// A gang can never fit when it asks more GPUs than the cluster has, more
// memory than its largest GPU, or more workers than its GPUs can host at
// 1/Fraction each (80,001 workers of three quarters never fit 80,000
// GPUs, though their 60,000 GPUs of share would). Four GPUs here.
func TestNeverFits(t *testing.T) {
	c := &policy.Cluster{Nodes: []policy.Node{
		{Name: "a", GPUs: []policy.GPU{{Index: 0, MemoryMiB: 16000}, {Index: 1, MemoryMiB: 16000}}},
		{Name: "b", GPUs: []policy.GPU{{Index: 0, MemoryMiB: 16000}, {Index: 1, MemoryMiB: 16000}}},
	}}
	for _, tc := range []struct {
		d     policy.Demand
		never string // a part of the reason, "" if it may fit
	}{
		{policy.Demand{Workers: 4, Fraction: 1}, ""},
		{policy.Demand{Workers: 5, Fraction: 1}, "cluster has 4 GPUs"},
		{policy.Demand{Workers: 1, Fraction: 0.5, MemMiB: 20000}, "largest GPU has 16000 MiB"},
		{policy.Demand{Workers: 4, Fraction: 0.75}, ""},
		{policy.Demand{Workers: 5, Fraction: 0.75}, "5 workers of 0.75 GPU, at most 1 to a GPU"},
		{policy.Demand{Workers: 8, Fraction: 0.4}, ""},
		{policy.Demand{Workers: 9, Fraction: 0.4}, "at most 2 to a GPU"},
		{policy.Demand{Workers: 12, Fraction: 1.0 / 3}, ""}, // three to a GPU, not 2.999…
		{policy.Demand{Workers: 13, Fraction: 0.3}, "at most 3 to a GPU"},
	} {
		got := policy.NeverFits(c, tc.d)
		if tc.never == "" && got != "" || tc.never != "" && !strings.Contains(got, tc.never) {
			t.Errorf("%+v: %q, want %q", tc.d, got, tc.never)
		}
	}
}
