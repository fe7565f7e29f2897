package nodesim

import (
	"maps"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/client/allocdir"
	"github.com/hashicorp/nomad/client/allocrunner/interfaces"
	"github.com/hashicorp/nomad/client/allocrunner/state"
	"github.com/hashicorp/nomad/client/config"
	cinterfaces "github.com/hashicorp/nomad/client/interfaces"
	"github.com/hashicorp/nomad/client/pluginmanager/drivermanager"
	cstructs "github.com/hashicorp/nomad/client/structs"
	"github.com/hashicorp/nomad/nomad/structs"
	"github.com/hashicorp/nomad/plugins/device"
	"github.com/hashicorp/nomad/plugins/drivers"
)

// DurationMeta is the job (or group, or task) meta key whose Go duration
// says how long a simulated allocation runs before its tasks complete
// ("90s"). Without it, batch allocations run DefaultDuration and service
// allocations until stopped.
const DurationMeta = "caravan.sim_duration"

// DefaultDuration is how long a batch allocation runs without DurationMeta.
const DefaultDuration = 10 * time.Second

// runner is an allocation runner that starts no process: its tasks are
// running at once, complete after the allocation's duration, and are
// killed when the server stops the allocation (a preemption, a job stop).
// It reports every change to the client, which sends it to the servers as
// a real client would.
type runner struct {
	updater cinterfaces.AllocStateHandler
	logger  hclog.Logger

	mu      sync.Mutex
	alloc   *structs.Allocation
	state   *state.State
	acked   *state.State
	pause   structs.TaskScheduleState
	stop    chan struct{} // closed once, when the tasks must end
	stopped bool
	done    chan struct{} // closed when the tasks are dead
	// dir is never built: the fs API (which the scheduler uses to read
	// progress files) then answers "no such file" instead of failing.
	dir *allocdir.AllocDir
}

// newRunner is a config.AllocRunnerFactory.
func newRunner(conf *config.AllocRunnerConfig) (interfaces.AllocRunner, error) {
	return &runner{
		updater: conf.StateUpdater,
		logger:  conf.Logger.With("alloc_id", conf.Alloc.ID, "job_id", conf.Alloc.JobID),
		alloc:   conf.Alloc,
		state:   &state.State{},
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		dir:     allocdir.NewAllocDir(conf.Logger, conf.ClientConfig.AllocDir, conf.ClientConfig.AllocMountsDir, conf.Alloc.ID),
	}, nil
}

var _ config.AllocRunnerFactory = newRunner

// Run marks the tasks running, then waits for the duration or a stop.
func (r *runner) Run() {
	r.setTasks(structs.TaskStateRunning, structs.TaskStarted, false)
	d, forever := r.duration()
	var timer <-chan time.Time
	if !forever {
		timer = time.After(d)
	}
	select {
	case <-timer:
		r.setTasks(structs.TaskStateDead, structs.TaskTerminated, false)
	case <-r.stop:
		r.setTasks(structs.TaskStateDead, structs.TaskKilled, false)
	}
	close(r.done)
}

// duration reads DurationMeta from the task, group or job (the most
// specific wins); a bad value counts as absent, logged.
func (r *runner) duration() (time.Duration, bool) {
	r.mu.Lock()
	a := r.alloc
	r.mu.Unlock()
	meta := maps.Clone(a.Job.Meta)
	if meta == nil {
		meta = map[string]string{}
	}
	if tg := a.Job.LookupTaskGroup(a.TaskGroup); tg != nil {
		maps.Copy(meta, tg.Meta)
		for _, t := range tg.Tasks {
			maps.Copy(meta, t.Meta)
		}
	}
	if s, ok := meta[DurationMeta]; ok {
		d, err := time.ParseDuration(s)
		if err == nil && d >= 0 {
			return d, false
		}
		r.logger.Warn("ignoring a bad duration", "key", DurationMeta, "value", s)
	}
	if a.Job.Type == structs.JobTypeService || a.Job.Type == structs.JobTypeSystem {
		return 0, true
	}
	return DefaultDuration, false
}

// setTasks moves every task to st with one event and reports it.
func (r *runner) setTasks(st, event string, failed bool) {
	r.mu.Lock()
	tg := r.alloc.Job.LookupTaskGroup(r.alloc.TaskGroup)
	states := map[string]*structs.TaskState{}
	now := time.Now()
	for _, t := range tg.Tasks {
		ts := r.state.TaskStates[t.Name]
		if ts == nil {
			ts = structs.NewTaskState()
		} else {
			ts = ts.Copy()
		}
		ev := structs.NewTaskEvent(event).SetMessage("simulated by caravan nodesim")
		ev.PopulateEventDisplayMessage()
		ts.Events = append(ts.Events, ev)
		ts.State, ts.Failed = st, failed
		if st == structs.TaskStateRunning && ts.StartedAt.IsZero() {
			ts.StartedAt = now
		}
		if st == structs.TaskStateDead {
			ts.FinishedAt = now
		}
		states[t.Name] = ts
	}
	r.state.TaskStates = states
	r.state.ClientStatus, r.state.ClientDescription = clientStatus(st, failed)
	if st == structs.TaskStateRunning {
		r.state.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: boolPtr(true), Timestamp: now}
	}
	update := &structs.Allocation{
		ID: r.alloc.ID, TaskStates: copyStates(states),
		ClientStatus: r.state.ClientStatus, ClientDescription: r.state.ClientDescription,
		DeploymentStatus: r.state.DeploymentStatus.Copy(), NetworkStatus: &structs.AllocNetworkStatus{},
	}
	r.mu.Unlock()
	r.updater.AllocStateUpdated(update)
}

func clientStatus(st string, failed bool) (string, string) {
	switch {
	case st == structs.TaskStateRunning:
		return structs.AllocClientStatusRunning, "Tasks are running"
	case failed:
		return structs.AllocClientStatusFailed, "Failed tasks"
	default:
		return structs.AllocClientStatusComplete, "All tasks have completed"
	}
}

func copyStates(m map[string]*structs.TaskState) map[string]*structs.TaskState {
	out := make(map[string]*structs.TaskState, len(m))
	for k, v := range m {
		out[k] = v.Copy()
	}
	return out
}

func boolPtr(b bool) *bool { return &b }

// Update takes the server's new view of the allocation; a stop ends it.
func (r *runner) Update(a *structs.Allocation) {
	r.mu.Lock()
	r.alloc = a
	r.mu.Unlock()
	if a.DesiredStatus == structs.AllocDesiredStatusStop || a.DesiredStatus == structs.AllocDesiredStatusEvict {
		r.kill()
	}
}

func (r *runner) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopped {
		r.stopped = true
		close(r.stop)
	}
}

// Alloc is the current allocation, not a copy (as Nomad's own alloc
// runner returns it): the runner never changes an allocation it handed
// out (SetClientStatus replaces it). A deep copy per call, job included,
// was a quarter of the simulated clients' CPU at 1,000 nodes.
func (r *runner) Alloc() *structs.Allocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.alloc
}

// AllocState is the last reported state.
func (r *runner) AllocState() *state.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state.Copy()
}

// AcknowledgeState records what the servers have.
func (r *runner) AcknowledgeState(s *state.State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acked = s
}

// GetUpdatePriority sends a client status change at once, other changes
// in the client's next batch.
func (r *runner) GetUpdatePriority(a *structs.Allocation) cstructs.AllocUpdatePriority {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.acked == nil || r.acked.ClientStatus != a.ClientStatus {
		return cstructs.AllocUpdatePriorityUrgent
	}
	return cstructs.AllocUpdatePriorityTypical
}

// SetClientStatus forces the allocation's client status (lost, unknown)
// on a shallow copy, so that allocations Alloc handed out stay as they
// were.
func (r *runner) SetClientStatus(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := *r.alloc
	a.ClientStatus = s
	r.alloc = &a
}

// Reconnect takes the server's allocation after a disconnect.
func (r *runner) Reconnect(a *structs.Allocation) error { r.Update(a); return nil }

// Shutdown and Destroy end the tasks (client shutdown, garbage collection).
func (r *runner) Shutdown() { r.kill() }
func (r *runner) Destroy()  { r.kill() }

// WaitCh is closed when the tasks are dead; so are DestroyCh and ShutdownCh
// (there is nothing else to tear down).
func (r *runner) WaitCh() <-chan struct{}     { return r.done }
func (r *runner) DestroyCh() <-chan struct{}  { return r.done }
func (r *runner) ShutdownCh() <-chan struct{} { return r.done }

func (r *runner) IsDestroyed() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Restore has nothing to restore: a simulated node starts empty.
func (r *runner) Restore() error      { return nil }
func (r *runner) PersistState() error { return nil }
func (r *runner) IsMigrating() bool   { return false }
func (r *runner) IsWaiting() bool     { return false }

// Signals and restarts do nothing to a process that does not exist.
func (r *runner) Signal(string, string) error                  { return nil }
func (r *runner) RestartTask(string, *structs.TaskEvent) error { return nil }
func (r *runner) RestartRunning(*structs.TaskEvent) error      { return nil }
func (r *runner) RestartAll(*structs.TaskEvent) error          { return nil }
func (r *runner) GetTaskEventHandler(string) drivermanager.EventHandler {
	return nil
}
func (r *runner) GetTaskExecHandler(string) drivermanager.TaskExecHandler { return nil }
func (r *runner) GetTaskDriverCapabilities(string) (*drivers.Capabilities, error) {
	return &drivers.Capabilities{}, nil
}
func (r *runner) StatsReporter() interfaces.AllocStatsReporter { return r }
func (r *runner) Listener() *cstructs.AllocListener            { return nil }
func (r *runner) GetAllocDir() allocdir.Interface              { return r.dir }

func (r *runner) GetTaskPauseState(string) (structs.TaskScheduleState, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pause, nil
}

func (r *runner) SetTaskPauseState(_ string, s structs.TaskScheduleState) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pause = s
	return nil
}

// LatestAllocStats reports zero use.
func (r *runner) LatestAllocStats(string) (*cstructs.AllocResourceUsage, error) {
	return &cstructs.AllocResourceUsage{
		ResourceUsage: &cstructs.ResourceUsage{MemoryStats: &cstructs.MemoryStats{}, CpuStats: &cstructs.CpuStats{},
			DeviceStats: []*device.DeviceGroupStats{}},
		Tasks: map[string]*cstructs.TaskResourceUsage{},
	}, nil
}
