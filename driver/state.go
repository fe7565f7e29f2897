package driver

import (
	"time"

	"github.com/caravan-dl/caravan/driver/ledger"
	"github.com/hashicorp/nomad/plugins/drivers"
	pstructs "github.com/hashicorp/nomad/plugins/shared/structs"
)

// taskState is stored in the task handle by StartTask; RecoverTask rebuilds
// the task from it after a plugin or client restart.
type taskState struct {
	ReattachConfig *pstructs.ReattachConfig
	TaskConfig     *drivers.TaskConfig
	Pid            int
	StartedAt      time.Time
	Grants         []ledger.Grant
	// MPSGPUs are the GPUs whose MPS daemon this task holds a reference on.
	MPSGPUs []string
	// Env is the caravan part of the task environment, for InspectTask.
	Env map[string]string
	// CheckpointDir is the task's checkpoint dir on the host.
	CheckpointDir string
	// Memshare is the task's remote memory endpoint and lending
	// (remotemem_recover.go); nil for other tasks.
	Memshare *memshareTaskState
}
