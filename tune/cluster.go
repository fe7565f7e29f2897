package tune

import "context"

// RunState is where a dispatched trial job is.
type RunState string

const (
	RunPending  RunState = "pending"
	RunRunning  RunState = "running"
	RunComplete RunState = "complete" // the task exited 0
	RunFailed   RunState = "failed"   // failed, lost or stopped
)

// Cluster is what the controller needs from Nomad; NomadCluster is the
// real one, tests use a fake.
type Cluster interface {
	// Dispatch starts one trial of the parameterized job; token makes a
	// retried dispatch (after a restart) return the same child job.
	Dispatch(ctx context.Context, job string, meta map[string]string, idPrefix, token string) (string, error)
	// State is the child job's newest allocation's state.
	State(ctx context.Context, child string) (RunState, error)
	// Reason says why a failed child failed (its last task events).
	Reason(ctx context.Context, child string) string
	// Progress reads the task's progress file in the child's newest
	// allocation.
	Progress(ctx context.Context, child, task string) ([]byte, error)
	// Stop stops the child job (kept in Nomad's history).
	Stop(ctx context.Context, child string) error
	// Load returns the saved state (nil if none) and its index; Save
	// writes it if the index still matches (check-and-set).
	Load(ctx context.Context, path string) ([]byte, uint64, error)
	Save(ctx context.Context, path string, data []byte, index uint64) (uint64, error)
	// List names the saved tuning states under prefix.
	List(ctx context.Context, prefix string) ([]string, error)
}
