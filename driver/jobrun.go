package driver

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/nomad/api"
)

// JobRunLookup returns the create index of a job: Nomad gives a job a new
// one when it is registered after a purge, so it tells two jobs of the
// same name apart.
type JobRunLookup func(ctx context.Context, namespace, jobID string) (uint64, error)

// WithJobRunLookup replaces the Nomad API lookup (tests).
func WithJobRunLookup(f JobRunLookup) Option { return func(o *options) { o.jobRun = f } }

// jobRunTimeout bounds the lookup: it is on StartTask's path.
const jobRunTimeout = 5 * time.Second

// nomadJobRun reads the job from the local Nomad agent's HTTP API.
func nomadJobRun(c IsolationConfig) JobRunLookup {
	return func(ctx context.Context, namespace, jobID string) (uint64, error) {
		conf := api.DefaultConfig() // NOMAD_ADDR, NOMAD_TOKEN, NOMAD_CACERT, ...
		if c.NomadAddress != "" {
			conf.Address = c.NomadAddress
		}
		if c.NomadToken != "" {
			conf.SecretID = c.NomadToken
		}
		if os.Getenv("NOMAD_ADDR") == "" && c.NomadAddress == "" {
			conf.Address = "http://127.0.0.1:4646"
		}
		client, err := api.NewClient(conf)
		if err != nil {
			return 0, err
		}
		q := (&api.QueryOptions{Namespace: namespace}).WithContext(ctx)
		job, _, err := client.Jobs().Info(jobID, q)
		if err != nil {
			return 0, fmt.Errorf("reading job %q from Nomad at %s: %w", jobID, conf.Address, err)
		}
		if job.CreateIndex == nil {
			return 0, fmt.Errorf("job %q has no create index", jobID)
		}
		return *job.CreateIndex, nil
	}
}

// jobRunKey names the run of the job a task belongs to: "job-<create
// index>", or, when Nomad cannot be asked, "alloc-<alloc id>" (a fresh
// checkpoint that survives restarts of this allocation but not
// preemption) and a note saying why, for the task's events.
func (d *Driver) jobRunKey(conf Config, namespace, jobID, allocID string) (key, note string) {
	lookup := d.opts.jobRun
	if lookup == nil {
		lookup = nomadJobRun(conf.IsolationConfig)
	}
	ctx, cancel := context.WithTimeout(d.ctx, jobRunTimeout)
	defer cancel()
	idx, err := lookup(ctx, namespace, jobID)
	if err != nil {
		return "alloc-" + allocID, fmt.Sprintf("checkpoint: cannot tell this run of the job from an earlier one (%v); "+
			"the checkpoint directory is this allocation's alone and will not carry over to a resumed allocation", err)
	}
	return fmt.Sprintf("job-%d", idx), ""
}
