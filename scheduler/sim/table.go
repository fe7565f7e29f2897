package sim

import (
	"fmt"
	"io"
	"strings"
)

// reference finds the result of a baseline ordering (bare or with any
// placement), or nil. For FIFO the YARN-CS placement (fifo+yarn, the
// Tiresias paper's baseline) wins over any other placement.
func reference(rs []*Result, ordering string) *Result {
	for _, r := range rs {
		if ordering == "fifo" && r.Policy == "fifo+yarn" {
			return r
		}
	}
	for _, r := range rs {
		if r.Policy == ordering || strings.HasPrefix(r.Policy, ordering+"+") {
			return r
		}
	}
	return nil
}

func ratio(v float64, ref *Result, get func(Metrics) float64) string {
	if ref == nil || get(ref.Metrics) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v/get(ref.Metrics))
}

// WriteTable prints a markdown table: avg, median and p99 JCT and
// makespan, each with its ratio to FIFO (named by its placement: the
// baseline is fifo+yarn) and to the SRTF oracle.
func WriteTable(w io.Writer, rs []*Result) {
	fifo, srtf := reference(rs, "fifo"), reference(rs, "srtf-oracle")
	base := "/fifo"
	if fifo != nil {
		base = "/" + fifo.Policy
	}
	cols := []struct {
		name string
		get  func(Metrics) float64
	}{
		{"avg JCT", func(m Metrics) float64 { return m.AvgJCT }},
		{"median JCT", func(m Metrics) float64 { return m.MedianJCT }},
		{"p99 JCT", func(m Metrics) float64 { return m.P99JCT }},
		{"makespan", func(m Metrics) float64 { return m.Makespan }},
	}
	head := []string{"policy"}
	for _, c := range cols {
		head = append(head, c.name+" (s)", base, "/srtf")
	}
	head = append(head, "GPU alloc", "GPU util", "preempt/job", "max FTF", "unfit")
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, r := range rs {
		row := []string{r.Policy}
		for _, c := range cols {
			v := c.get(r.Metrics)
			row = append(row, fmt.Sprintf("%.0f", v), ratio(v, fifo, c.get), ratio(v, srtf, c.get))
		}
		m := r.Metrics
		row = append(row, fmt.Sprintf("%.1f%%", 100*m.GPUAlloc), fmt.Sprintf("%.1f%%", 100*m.GPUUtil),
			fmt.Sprintf("%.2f", m.PreemptPerJob), fmt.Sprintf("%.1f", m.MaxFTF), fmt.Sprint(m.Unfit))
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
}

// WriteBucketTable prints avg JCT per size and duration bucket, one column
// per policy (Tiresias-paper style).
func WriteBucketTable(w io.Writer, rs []*Result) {
	if len(rs) == 0 {
		return
	}
	head := []string{"bucket", "jobs"}
	for _, r := range rs {
		head = append(head, r.Policy)
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for i, b := range rs[0].Buckets {
		row := []string{b.Kind + " " + b.Label, fmt.Sprint(b.Jobs)}
		for _, r := range rs {
			if i < len(r.Buckets) && r.Buckets[i].Label == b.Label {
				row = append(row, fmt.Sprintf("%.0f", r.Buckets[i].AvgJCT))
			} else {
				row = append(row, "-")
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
}
