package driver

import (
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"time"

	"github.com/hashicorp/nomad/client/lib/numalib"
	"github.com/hashicorp/nomad/drivers/shared/executor"
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/drivers"
	pstructs "github.com/hashicorp/nomad/plugins/shared/structs"
)

// StartTask validates the task, admits its GPU request, and launches it
// through Nomad's executor. A task that does not fit fails with the
// ledger's message and leaves nothing held.
func (d *Driver) StartTask(cfg *drivers.TaskConfig) (*drivers.TaskHandle, *drivers.DriverNetwork, error) {
	d.admitMu.RLock()
	defer d.admitMu.RUnlock()
	if _, ok := d.tasks.get(cfg.ID); ok {
		return nil, nil, fmt.Errorf("task with ID %q already started", cfg.ID)
	}
	node, conf, err := d.gpus()
	if err != nil {
		return nil, nil, err
	}
	var tc TaskConfig
	if err := cfg.DecodeDriverConfig(&tc); err != nil {
		return nil, nil, fmt.Errorf("caravan task config: %v", err)
	}
	req, err := tc.parse()
	if err != nil {
		return nil, nil, fmt.Errorf("caravan task config: %w", err)
	}
	if err := tc.unavailableFeature(); err != nil {
		return nil, nil, fmt.Errorf("caravan task config: %w", err)
	}

	// Resolve the aggregator before taking a GPU share: nothing to undo.
	aggEnv, err := d.aggregatorEnv(tc.Aggregator, cfg.Namespace, cfg.JobID)
	if err != nil {
		return nil, nil, err
	}
	a, err := d.assignGPUs(node, cfg, req)
	if err != nil {
		return nil, nil, err
	}
	maps.Copy(a.env, aggEnv)
	h, err := d.launch(node, conf, cfg, &tc, a)
	if err != nil {
		d.releaseGrants(node, cfg.ID, a.mpsGPUs)
		return nil, nil, err
	}
	handle, err := d.newTaskHandle(cfg, h, a)
	if err != nil {
		_ = h.exec.Shutdown("", 0)
		h.pluginClient.Kill()
		d.releaseGrants(node, cfg.ID, a.mpsGPUs)
		return nil, nil, err
	}
	d.tasks.set(cfg.ID, h)
	go h.run(d.ctx)
	d.emitGrantEvent(cfg, a)
	return handle, nil, nil
}

// launch prepares the task's paths and starts it under a new executor.
func (d *Driver) launch(node *nodeGPUs, conf Config, cfg *drivers.TaskConfig, tc *TaskConfig, a assignment) (*taskHandle, error) {
	paths, err := prepareTaskPaths(conf.CheckpointRoot, cfg)
	if err != nil {
		return nil, err
	}
	maps.Copy(a.env, paths.env())

	logger := d.logger.With("task_name", cfg.Name, "alloc_id", cfg.AllocID)
	execCfg := &executor.ExecutorConfig{
		LogFile:  filepath.Join(cfg.TaskDir().Dir, "executor.out"),
		LogLevel: "debug",
		Compute:  d.driverConfig().Topology.Compute(),
	}
	exec, client, err := executor.CreateExecutor(logger, d.driverConfig(), execCfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create executor: %v", err)
	}
	ps, err := exec.Launch(&executor.ExecCommand{
		Cmd:              tc.Command,
		Args:             tc.Args,
		Env:              envList(cfg.Env, a.env),
		User:             cfg.User,
		TaskDir:          cfg.TaskDir().Dir,
		StdoutPath:       cfg.StdoutPath,
		StderrPath:       cfg.StderrPath,
		NetworkIsolation: cfg.NetworkIsolation,
		Resources:        cfg.Resources.Copy(),
	})
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("failed to launch command with executor: %v", err)
	}
	h := &taskHandle{
		exec:         exec,
		pluginClient: client,
		pid:          ps.Pid,
		logger:       logger,
		taskConfig:   cfg,
		grants:       a.grants,
		mpsGPUs:      a.mpsGPUs,
		startedAt:    time.Now().Round(time.Millisecond),
		procState:    drivers.TaskStateRunning,
		exitResult:   &drivers.ExitResult{},
		doneCh:       make(chan struct{}),
	}
	h.release = func() { d.releaseGrants(node, cfg.ID, a.mpsGPUs) }
	return h, nil
}

// newTaskHandle records what RecoverTask needs.
func (d *Driver) newTaskHandle(cfg *drivers.TaskConfig, h *taskHandle, a assignment) (*drivers.TaskHandle, error) {
	handle := drivers.NewTaskHandle(taskHandleVersion)
	handle.Config = cfg
	state := taskState{
		ReattachConfig: pstructs.ReattachConfigFromGoPlugin(h.pluginClient.ReattachConfig()),
		TaskConfig:     cfg,
		Pid:            h.pid,
		StartedAt:      h.startedAt,
		Grants:         a.grants,
		MPSGPUs:        a.mpsGPUs,
		Env:            a.env,
	}
	if err := handle.SetDriverState(&state); err != nil {
		return nil, fmt.Errorf("failed to set driver state: %v", err)
	}
	return handle, nil
}

// driverConfig is the agent's driver config, with the CPU topology scanned
// here when the agent did not send one (the executor needs it).
func (d *Driver) driverConfig() *base.ClientDriverConfig {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.nomadConfig == nil {
		d.nomadConfig = &base.ClientDriverConfig{}
	}
	if d.nomadConfig.Topology == nil {
		d.nomadConfig.Topology = numalib.Scan(numalib.PlatformScanners(false))
	}
	return d.nomadConfig
}

// envList merges Nomad's task env with caravan's; caravan's wins so a
// stray CUDA_VISIBLE_DEVICES cannot escape the grant.
func envList(base, caravan map[string]string) []string {
	merged := maps.Clone(base)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, caravan)
	out := make([]string, 0, len(merged))
	for k, v := range merged {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
