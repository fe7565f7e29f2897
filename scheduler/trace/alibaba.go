package trace

import (
	"fmt"
	"strconv"
)

// AlibabaOptions control how pods become jobs.
type AlibabaOptions struct {
	// RoundUp gives fractional pods a whole GPU (the no-sharing baseline).
	RoundUp bool
}

// LoadAlibabaPods reads openb_pod_list_*.csv from the Alibaba GPU v2023
// trace. Times are seconds. A pod's run time is deletion_time minus
// scheduled_time, or minus creation_time for pods the real cluster never
// scheduled (their recorded lifetime stands in for their demand).
// CPU-only pods (num_gpu = 0) are not GPU work and are left out; Trace
// reports how many. num_gpu = 1 with gpu_milli < 1000 is a fractional
// request of gpu_milli/1000 of one GPU.
func LoadAlibabaPods(path string, opt AlibabaOptions) (*Trace, int, error) {
	t, err := readTable(path, "name", "num_gpu", "gpu_milli", "creation_time", "deletion_time")
	if err != nil {
		return nil, 0, err
	}
	var jobs []Job
	skipped := 0
	for _, r := range t.rows {
		j, ok, err := alibabaJob(t, r, opt)
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			skipped++
			continue
		}
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return nil, skipped, fmt.Errorf("%s: no GPU pods", path)
	}
	sortJobs(jobs)
	return &Trace{Name: "alibaba", Jobs: jobs}, skipped, nil
}

func alibabaJob(t *table, r row, opt AlibabaOptions) (Job, bool, error) {
	ngpu, err := t.nonNeg(r, "num_gpu")
	if err != nil || ngpu != float64(int(ngpu)) {
		return Job{}, false, fmt.Errorf("%s: column num_gpu: %q is not a whole number ≥ 0", t.where(r), t.str(r, "num_gpu"))
	}
	if ngpu == 0 {
		return Job{}, false, nil
	}
	milli, err := t.nonNeg(r, "gpu_milli")
	if err != nil {
		return Job{}, false, err
	}
	if milli <= 0 || milli > 1000 {
		return Job{}, false, fmt.Errorf("%s: gpu_milli %v must be in (0, 1000] for a GPU pod", t.where(r), milli)
	}
	frac := 1.0
	if ngpu == 1 && milli < 1000 && !opt.RoundUp {
		frac = milli / 1000
	}
	created, err := t.nonNeg(r, "creation_time")
	if err != nil {
		return Job{}, false, err
	}
	deleted, err := t.nonNeg(r, "deletion_time")
	if err != nil {
		return Job{}, false, err
	}
	start := created
	if t.str(r, "scheduled_time") != "" {
		if start, err = t.nonNeg(r, "scheduled_time"); err != nil {
			return Job{}, false, err
		}
	}
	if deleted < start {
		return Job{}, false, fmt.Errorf("%s: deletion_time %v is before start %v (negative duration)", t.where(r), deleted, start)
	}
	mem, _ := strconv.ParseInt(t.str(r, "memory_mib"), 10, 64)
	cpu, _ := strconv.ParseInt(t.str(r, "cpu_milli"), 10, 64)
	return Job{
		ID:       t.str(r, "name"),
		Submit:   created,
		Duration: deleted - start,
		GPUs:     int(ngpu),
		Fraction: frac,
		CPUMilli: cpu,
		MemMiB:   mem,
		User:     t.str(r, "qos"),
		Source:   t.where(r),
	}, true, nil
}

// NodeSpec is one machine of a heterogeneous cluster.
type NodeSpec struct {
	Name     string
	GPUs     int
	Model    string
	CPUMilli int64
	MemMiB   int64
}

// LoadAlibabaNodes reads openb_node_list_*.csv (sn,cpu_milli,memory_mib,
// gpu,model). Nodes without GPUs are left out.
func LoadAlibabaNodes(path string) ([]NodeSpec, error) {
	t, err := readTable(path, "sn", "gpu")
	if err != nil {
		return nil, err
	}
	var out []NodeSpec
	for _, r := range t.rows {
		g, err := t.nonNeg(r, "gpu")
		if err != nil || g != float64(int(g)) {
			return nil, fmt.Errorf("%s: column gpu: %q is not a whole number ≥ 0", t.where(r), t.str(r, "gpu"))
		}
		if g == 0 {
			continue
		}
		cpu, _ := strconv.ParseInt(t.str(r, "cpu_milli"), 10, 64)
		mem, _ := strconv.ParseInt(t.str(r, "memory_mib"), 10, 64)
		out = append(out, NodeSpec{Name: t.str(r, "sn"), GPUs: int(g), Model: t.str(r, "model"), CPUMilli: cpu, MemMiB: mem})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no GPU nodes", path)
	}
	return out, nil
}
