package sim

import "fmt"

// Bucket is the JCT of jobs grouped by size or duration, as the Tiresias
// paper reports them (its Figures 8–9 split by GPU count and run time).
type Bucket struct {
	Kind   string  `json:"kind"` // "gpus" or "duration"
	Label  string  `json:"label"`
	Jobs   int     `json:"jobs"`
	AvgJCT float64 `json:"avg_jct"`
	P99JCT float64 `json:"p99_jct"`
	AvgQ   float64 `json:"avg_queueing"`
}

var sizeEdges = []struct {
	label  string
	lo, hi int
}{{"1", 1, 1}, {"2-4", 2, 4}, {"5-8", 5, 8}, {"9-32", 9, 32}, {">32", 33, 1 << 30}}

var durEdges = []struct {
	label  string
	lo, hi float64
}{{"<10m", 0, 600}, {"10m-1h", 600, 3600}, {"1h-6h", 3600, 6 * 3600}, {"6h-1d", 6 * 3600, 86400}, {">1d", 86400, 1e18}}

func buckets(jobs []JobResult) []Bucket {
	var out []Bucket
	for _, e := range sizeEdges {
		out = appendBucket(out, "gpus", e.label, jobs, func(j JobResult) bool { return j.GPUs >= e.lo && j.GPUs <= e.hi })
	}
	for _, e := range durEdges {
		out = appendBucket(out, "duration", e.label, jobs, func(j JobResult) bool { return j.Duration >= e.lo && j.Duration < e.hi })
	}
	return out
}

func appendBucket(out []Bucket, kind, label string, jobs []JobResult, in func(JobResult) bool) []Bucket {
	var jct, q []float64
	for _, j := range jobs {
		if in(j) {
			jct = append(jct, j.JCT)
			q = append(q, j.Queueing)
		}
	}
	if len(jct) == 0 {
		return out
	}
	return append(out, Bucket{Kind: kind, Label: label, Jobs: len(jct), AvgJCT: mean(jct), P99JCT: quantile(jct, .99), AvgQ: mean(q)})
}

// String renders a bucket for tables.
func (b Bucket) String() string {
	return fmt.Sprintf("%s %s: %d jobs, avg JCT %.0f s", b.Kind, b.Label, b.Jobs, b.AvgJCT)
}
