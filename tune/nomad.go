package tune

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/caravan-dl/caravan/internal/gzip64"
	"github.com/hashicorp/nomad/api"
)

// stateItem is the Variable item holding a tuning state; a state larger
// than plainLimit is stored gzipped and base64-encoded under gzItem, since
// Nomad caps a Variable at 64 KiB and a big search's JSON compresses ~5×.
const (
	stateItem  = "state"
	gzItem     = "state.gz"
	plainLimit = 48 << 10
)

// maxProgress bounds how much of a progress file is read.
const maxProgress = 8 << 20

// NomadCluster is Cluster on a Nomad API client.
type NomadCluster struct {
	API       *api.Client
	Namespace string
	// QueuePool is the caravan scheduler's queue (default "caravan-queue").
	// Trials of a template in it are registered as plain jobs named
	// "<template>/trial-…", not dispatched: the scheduler admits a job by
	// rewriting it, and Nomad refuses any update of a dispatched job.
	QueuePool string
}

// TrialInfix joins a template's ID and a registered trial's name.
const TrialInfix = "/trial-"

func (n *NomadCluster) q(ctx context.Context) *api.QueryOptions {
	return (&api.QueryOptions{Namespace: n.Namespace}).WithContext(ctx)
}

func (n *NomadCluster) w(ctx context.Context) *api.WriteOptions {
	return (&api.WriteOptions{Namespace: n.Namespace}).WithContext(ctx)
}

// Dispatch dispatches the parameterized job with an idempotency token, or
// registers a trial job from it when it sits in the queue pool.
func (n *NomadCluster) Dispatch(ctx context.Context, job string, meta map[string]string, prefix, token string) (string, error) {
	tmpl, _, err := n.API.Jobs().Info(job, n.q(ctx))
	if err != nil {
		return "", fmt.Errorf("read the trial template %s: %w", job, err)
	}
	if tmpl.ParameterizedJob == nil {
		return "", fmt.Errorf("job %s is not parameterized: declare a parameterized block with the hyperparameters as meta", job)
	}
	queue := n.QueuePool
	if queue == "" {
		queue = "caravan-queue"
	}
	if tmpl.NodePool != nil && *tmpl.NodePool == queue {
		return n.registerTrial(ctx, tmpl, meta, prefix, token)
	}
	wo := n.w(ctx)
	wo.IdempotencyToken = token
	resp, _, err := n.API.Jobs().DispatchOpts(&api.DispatchOptions{JobID: job, Meta: meta, IdPrefixTemplate: prefix}, wo)
	if err != nil {
		return "", err
	}
	return resp.DispatchedJobID, nil
}

// newest is the child's most recent allocation, or nil.
func (n *NomadCluster) newest(ctx context.Context, child string) (*api.AllocationListStub, error) {
	allocs, _, err := n.API.Jobs().Allocations(child, true, n.q(ctx))
	if err != nil {
		return nil, err
	}
	sort.Slice(allocs, func(a, b int) bool { return allocs[a].CreateIndex > allocs[b].CreateIndex })
	if len(allocs) == 0 {
		return nil, nil
	}
	return allocs[0], nil
}

// State maps the child job and its newest allocation to a RunState: a
// dead job whose allocation completed is complete; a dead job otherwise
// (stopped, failed, lost) has failed.
func (n *NomadCluster) State(ctx context.Context, child string) (RunState, error) {
	job, _, err := n.API.Jobs().Info(child, n.q(ctx))
	if isNotFound(err) {
		return RunFailed, nil // purged or garbage-collected before we saw it end
	}
	if err != nil {
		return "", err
	}
	a, err := n.newest(ctx, child)
	if err != nil {
		return "", err
	}
	switch {
	case a != nil && a.ClientStatus == api.AllocClientStatusComplete:
		return RunComplete, nil
	case a != nil && (a.ClientStatus == api.AllocClientStatusFailed || a.ClientStatus == api.AllocClientStatusLost):
		return RunFailed, nil
	case job.Status != nil && *job.Status == "dead":
		return RunFailed, nil
	case a != nil && a.ClientStatus == api.AllocClientStatusRunning:
		return RunRunning, nil
	}
	return RunPending, nil
}

// Progress reads alloc/caravan/<task>.progress.jsonl of the newest
// allocation through Nomad's fs API.
func (n *NomadCluster) Progress(ctx context.Context, child, task string) ([]byte, error) {
	a, err := n.newest(ctx, child)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, fmt.Errorf("job %s has no allocation", child)
	}
	rc, err := n.API.AllocFS().Cat(&api.Allocation{ID: a.ID, NodeID: a.NodeID, Namespace: a.Namespace}, "alloc/caravan/"+task+".progress.jsonl", n.q(ctx))
	if err != nil {
		return nil, fmt.Errorf("read progress of %s: %w", child, err)
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, maxProgress))
}

// Stop deregisters the child without purging it: Nomad keeps it, stopped.
func (n *NomadCluster) Stop(ctx context.Context, child string) error {
	_, _, err := n.API.Jobs().Deregister(child, false, n.w(ctx))
	return err
}

// Load reads a Variable; a missing one is (nil, 0).
func (n *NomadCluster) Load(ctx context.Context, path string) ([]byte, uint64, error) {
	v, _, err := n.API.Variables().Peek(path, n.q(ctx))
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	if v == nil {
		return nil, 0, nil
	}
	if z := v.Items[gzItem]; z != "" {
		b, err := gzip64.Decode(z, maxState)
		if err != nil {
			return nil, 0, fmt.Errorf("read %s: %s: %w", path, gzItem, err)
		}
		return b, v.ModifyIndex, nil
	}
	return []byte(v.Items[stateItem]), v.ModifyIndex, nil
}

// Save writes a Variable with check-and-set on index.
func (n *NomadCluster) Save(ctx context.Context, path string, data []byte, index uint64) (uint64, error) {
	items := api.VariableItems{stateItem: string(data)}
	if len(data) > plainLimit {
		z, err := gzip64.Encode(data)
		if err != nil {
			return 0, err
		}
		items = api.VariableItems{gzItem: z}
	}
	v := &api.Variable{Namespace: n.Namespace, Path: path, Items: items, ModifyIndex: index}
	out, _, err := n.API.Variables().CheckedUpdate(v, n.w(ctx))
	var cas api.ErrCASConflict
	if errors.As(err, &cas) {
		return 0, ErrStateTaken
	}
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	return out.ModifyIndex, nil
}

// List names the Variables under prefix.
func (n *NomadCluster) List(ctx context.Context, prefix string) ([]string, error) {
	vs, _, err := n.API.Variables().PrefixList(prefix, n.q(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Path
	}
	return out, nil
}

func isNotFound(err error) bool {
	var ue api.UnexpectedResponseError
	return errors.As(err, &ue) && ue.StatusCode() == 404
}

// Reason renders the newest allocation's last task events.
func (n *NomadCluster) Reason(ctx context.Context, child string) string {
	a, err := n.newest(ctx, child)
	if err != nil || a == nil {
		return "no allocation"
	}
	var out []string
	for task, ts := range a.TaskStates {
		evs := ts.Events
		if len(evs) > 3 {
			evs = evs[len(evs)-3:]
		}
		for _, e := range evs {
			msg := e.DisplayMessage
			if msg == "" {
				msg = e.Type
			}
			out = append(out, task+": "+msg)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// registerTrial registers a copy of the template as a plain batch job with
// the trial's meta. Its ID derives from the token, and it is created only if
// absent, so a retried registration (after a restart) is idempotent.
func (n *NomadCluster) registerTrial(ctx context.Context, tmpl *api.Job, meta map[string]string, prefix, token string) (string, error) {
	sum := sha256.Sum256([]byte(token))
	id := *tmpl.ID + TrialInfix + prefix + "-" + hex.EncodeToString(sum[:4])
	for _, k := range tmpl.ParameterizedJob.MetaRequired {
		if _, ok := meta[k]; !ok {
			return "", fmt.Errorf("job %s requires meta %q, which the spec does not set", *tmpl.ID, k)
		}
	}
	j := tmpl
	j.ID, j.Name, j.ParameterizedJob, j.Status, j.Stop = &id, &id, nil, nil, nil
	if j.Meta == nil {
		j.Meta = map[string]string{}
	}
	for k, v := range meta {
		j.Meta[k] = v
	}
	_, _, err := n.API.Jobs().RegisterOpts(j, &api.RegisterOptions{EnforceIndex: true, ModifyIndex: 0}, n.w(ctx))
	if err != nil && strings.Contains(err.Error(), "conflicting job modify index") {
		return id, nil // registered before a restart
	}
	if err != nil {
		return "", err
	}
	return id, nil
}
