package trace

import (
	"fmt"
	"time"
)

// PhillyOptions filter a Philly load.
type PhillyOptions struct {
	// VC keeps only jobs of this virtual cluster ("" = all).
	VC string
}

const phillyTimeLayout = "2006-01-02 15:04:05"

// LoadPhilly reads philly_jobs.csv (timestamp,duration,num_gpus,gpu_time,
// cluster). Timestamps are wall-clock strings in the cluster's local time;
// only differences matter, so they are parsed as UTC.
func LoadPhilly(path string, opt PhillyOptions) (*Trace, error) {
	t, err := readTable(path, "timestamp", "duration", "num_gpus", "cluster")
	if err != nil {
		return nil, err
	}
	jobs := make([]Job, 0, len(t.rows))
	for i, r := range t.rows {
		vc := t.str(r, "cluster")
		if opt.VC != "" && vc != opt.VC {
			continue
		}
		j, err := phillyJob(t, r, i)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%s: no jobs (virtual cluster %q)", path, opt.VC)
	}
	sortJobs(jobs)
	name := "philly"
	if opt.VC != "" {
		name += "-" + opt.VC
	}
	return &Trace{Name: name, Jobs: jobs}, nil
}

func phillyJob(t *table, r row, i int) (Job, error) {
	ts := t.str(r, "timestamp")
	at, err := time.Parse(phillyTimeLayout, ts)
	if err != nil {
		return Job{}, fmt.Errorf("%s: column timestamp: %q is not %q", t.where(r), ts, phillyTimeLayout)
	}
	dur, err := t.nonNeg(r, "duration")
	if err != nil {
		return Job{}, err
	}
	gpus, err := t.posInt(r, "num_gpus")
	if err != nil {
		return Job{}, err
	}
	vc := t.str(r, "cluster")
	return Job{
		ID:       fmt.Sprintf("p%06d", i),
		Submit:   float64(at.Unix()),
		Duration: dur,
		GPUs:     gpus,
		Fraction: 1,
		User:     vc,
		Group:    vc,
		Source:   t.where(r),
	}, nil
}
