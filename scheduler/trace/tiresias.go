package trace

import (
	"fmt"
	"math"
)

// LoadTiresias reads a Tiresias simulator job file (job_id,num_gpu,
// submit_time,iterations,model_name,duration,interval). submit_time and
// duration are seconds: the reference simulator (SymbioticLab/Tiresias,
// jobs.py) reads both as integer seconds and compares attained GPU-time
// against queue limits in GPU-seconds.
func LoadTiresias(path string) (*Trace, error) {
	t, err := readTable(path, "job_id", "num_gpu", "submit_time", "duration")
	if err != nil {
		return nil, err
	}
	jobs := make([]Job, 0, len(t.rows))
	for _, r := range t.rows {
		gpus, err := t.posInt(r, "num_gpu")
		if err != nil {
			return nil, err
		}
		sub, err := t.nonNeg(r, "submit_time")
		if err != nil {
			return nil, err
		}
		dur, err := t.nonNeg(r, "duration")
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, Job{
			ID:       "t" + t.str(r, "job_id"),
			Submit:   sub,
			Duration: dur,
			GPUs:     gpus,
			Fraction: 1,
			Model:    t.str(r, "model_name"),
			Source:   t.where(r),
		})
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%s: no jobs", path)
	}
	sortJobs(jobs)
	return &Trace{Name: "tiresias", Jobs: jobs}, nil
}

// LoadGittinsSamples reads yarn-gput*.csv: one column of job GPU-time
// samples (seconds), the prior for the Gittins index.
func LoadGittinsSamples(path string) ([]float64, error) {
	t, err := readTable(path)
	if err != nil {
		return nil, err
	}
	col := ""
	for _, c := range []string{"duration", "gpu_time", "gputime"} {
		if t.has(c) {
			col = c
			break
		}
	}
	if col == "" {
		return nil, fmt.Errorf("%s:1: want a duration column", path)
	}
	out := make([]float64, 0, len(t.rows))
	for _, r := range t.rows {
		v, err := t.nonNeg(r, col)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no samples", path)
	}
	return out, nil
}

// ClusterSpec is a Tiresias cluster spec: switches × nodes per switch ×
// GPUs per node.
type ClusterSpec struct {
	Switches       int
	NodesPerSwitch int
	GPUsPerNode    int
	CPUsPerNode    int
	MemGBPerNode   int
}

// GPUs is the cluster's total GPU count.
func (c ClusterSpec) GPUs() int { return c.Switches * c.NodesPerSwitch * c.GPUsPerNode }

// LoadClusterSpec reads n32g4.csv-style files (one data row).
func LoadClusterSpec(path string) (ClusterSpec, error) {
	t, err := readTable(path, "num_switch", "num_node_p_switch", "num_gpu_p_node")
	if err != nil {
		return ClusterSpec{}, err
	}
	if len(t.rows) != 1 {
		return ClusterSpec{}, fmt.Errorf("%s: want exactly one data row, got %d", path, len(t.rows))
	}
	r := t.rows[0]
	var c ClusterSpec
	for _, f := range []struct {
		col string
		dst *int
	}{{"num_switch", &c.Switches}, {"num_node_p_switch", &c.NodesPerSwitch}, {"num_gpu_p_node", &c.GPUsPerNode}} {
		if *f.dst, err = t.posInt(r, f.col); err != nil {
			return ClusterSpec{}, err
		}
	}
	c.CPUsPerNode = optInt(t, r, "num_cpu_p_node")
	c.MemGBPerNode = optInt(t, r, "mem_p_node")
	if c.GPUs() > 1<<20 {
		return ClusterSpec{}, fmt.Errorf("%s: cluster of %d GPUs is implausibly large", path, c.GPUs())
	}
	return c, nil
}

func optInt(t *table, r row, col string) int {
	v, err := t.float(r, col)
	if err != nil || v < 0 || v > math.MaxInt32 {
		return 0
	}
	return int(v)
}
