package sim

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// WriteFiles writes summary.json, jobs.csv, series.csv and buckets.csv for
// one run into dir (created if needed), names prefixed by prefix.
func (r *Result) WriteFiles(dir, prefix string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"summary.json", r.WriteJSON},
		{"jobs.csv", r.WriteJobsCSV},
		{"series.csv", r.WriteSeriesCSV},
		{"buckets.csv", r.WriteBucketsCSV},
	} {
		if err := writeFile(filepath.Join(dir, prefix+f.name), f.write); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// WriteJSON writes the summary (metrics, buckets, unfit jobs).
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

// WriteJobsCSV writes one row per finished job. (A csv.Writer keeps its
// first write error; Flush and Error report it, so writes go unchecked.)
func (r *Result) WriteJobsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"id", "gpus", "fraction", "model", "submit", "start", "finish", "duration", "jct", "queueing", "preemptions", "ftf"})
	for _, j := range r.Jobs {
		_ = cw.Write([]string{j.ID, strconv.Itoa(j.GPUs), num(j.Fraction), j.Model, num(j.Submit), num(j.Start), num(j.Finish),
			num(j.Duration), num(j.JCT), num(j.Queueing), strconv.Itoa(j.Preemptions), num(j.FTF)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteSeriesCSV writes the sampled queue length and GPU use over time.
func (r *Result) WriteSeriesCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"t", "queued", "running", "alloc_gpus", "busy_gpus"})
	for _, s := range r.Series {
		_ = cw.Write([]string{num(s.T), strconv.Itoa(s.Queued), strconv.Itoa(s.Running), num(s.AllocGPUs), num(s.BusyGPUs)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteBucketsCSV writes JCT by size and duration bucket.
func (r *Result) WriteBucketsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"kind", "bucket", "jobs", "avg_jct", "p99_jct", "avg_queueing"})
	for _, b := range r.Buckets {
		_ = cw.Write([]string{b.Kind, b.Label, strconv.Itoa(b.Jobs), num(b.AvgJCT), num(b.P99JCT), num(b.AvgQ)})
	}
	cw.Flush()
	return cw.Error()
}
