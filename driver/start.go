package driver

import (
	"fmt"
	"maps"
	"path/filepath"
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

	u, err := conf.resolveTaskUser(cfg.User)
	if err != nil {
		return nil, nil, fmt.Errorf("caravan: %w", err)
	}

	// Ask Nomad and Consul before taking a GPU share: nothing to undo.
	aggEnv, err := d.aggregatorEnv(tc.Aggregator, cfg.Namespace, cfg.JobID)
	if err != nil {
		return nil, nil, err
	}
	run, note := d.jobRunKey(conf, cfg.Namespace, cfg.JobID, cfg.AllocID)
	memEnv, err := d.attachRemoteMemory(cfg, &tc)
	if err != nil {
		return nil, nil, err
	}
	started := false
	defer func() {
		if !started {
			d.mem.detach(cfg.ID)
		}
	}()
	a, err := d.assignGPUs(node, cfg, req, !conf.NoIsolation)
	if err != nil {
		return nil, nil, err
	}
	maps.Copy(a.env, aggEnv)
	maps.Copy(a.env, memEnv)
	h, err := d.launch(node, conf, cfg, &tc, a, u, run)
	if err != nil {
		d.releaseGrants(node, cfg.ID, a.mpsGPUs)
		return nil, nil, err
	}
	handle, err := d.newTaskHandle(cfg, h, a, d.memshareState(cfg.ID, &tc))
	if err != nil {
		_ = h.exec.Shutdown("", 0)
		h.pluginClient.Kill()
		d.releaseGrants(node, cfg.ID, a.mpsGPUs)
		return nil, nil, err
	}
	started = true
	d.lendDonorMemory(cfg, &tc, h)
	d.tasks.set(cfg.ID, h)
	go h.run(d.ctx)
	d.emitGrantEvent(cfg, a)
	if note != "" {
		d.emit(cfg, note, nil)
	}
	return handle, nil, nil
}

// launch prepares the task's paths and starts it under a new executor:
// isolated (chroot of read-only binds, private PID and IPC namespaces,
// only its GPUs' device nodes) unless no_isolation is set.
func (d *Driver) launch(node *nodeGPUs, conf Config, cfg *drivers.TaskConfig, tc *TaskConfig,
	a assignment, u taskUser, run string) (*taskHandle, error) {
	paths, err := prepareTaskPaths(conf.CheckpointRoot, run, cfg, &u)
	if err != nil {
		return nil, err
	}
	isolated := !conf.NoIsolation
	maps.Copy(a.env, paths.env(isolated, cfg.Name))
	mpsPipe := a.env["CUDA_MPS_PIPE_DIRECTORY"]
	if isolated && mpsPipe != "" {
		a.env["CUDA_MPS_PIPE_DIRECTORY"] = taskMPSPipeDir
	}
	cmd := &executor.ExecCommand{
		Cmd:              tc.Command,
		Args:             tc.Args,
		Env:              envList(cfg.Env, a.env),
		User:             u.Name,
		TaskDir:          cfg.TaskDir().Dir,
		StdoutPath:       cfg.StdoutPath,
		StderrPath:       cfg.StderrPath,
		NetworkIsolation: cfg.NetworkIsolation,
		Resources:        cfg.Resources.Copy(),
	}
	if isolated {
		if err := d.isolate(cmd, node, conf, cfg, a, u, paths, mpsPipe); err != nil {
			return nil, err
		}
	}

	logger := d.logger.With("task_name", cfg.Name, "alloc_id", cfg.AllocID)
	execCfg := &executor.ExecutorConfig{
		LogFile:     filepath.Join(cfg.TaskDir().Dir, "executor.out"),
		LogLevel:    "debug",
		FSIsolation: isolated,
		Compute:     d.driverConfig().Topology.Compute(),
	}
	exec, client, err := executor.CreateExecutor(logger, d.driverConfig(), execCfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create executor: %v", err)
	}
	ps, err := exec.Launch(cmd)
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("failed to launch command with executor: %v", err)
	}
	h := &taskHandle{
		exec:          exec,
		pluginClient:  client,
		pid:           ps.Pid,
		logger:        logger,
		taskConfig:    cfg,
		grants:        a.grants,
		mpsGPUs:       a.mpsGPUs,
		startedAt:     time.Now().Round(time.Millisecond),
		checkpointDir: paths.CheckpointDir,
		procState:     drivers.TaskStateRunning,
		exitResult:    &drivers.ExitResult{},
		doneCh:        make(chan struct{}),
	}
	h.release = func() { d.releaseGrants(node, cfg.ID, a.mpsGPUs) }
	return h, nil
}

// isolate adds the chroot, namespaces, user and device nodes to cmd.
func (d *Driver) isolate(cmd *executor.ExecCommand, node *nodeGPUs, conf Config, cfg *drivers.TaskConfig,
	a assignment, u taskUser, paths taskPaths, mpsPipe string) error {
	devs, err := node.grantedDevices(grantUUIDs(a.grants))
	if err != nil {
		return err
	}
	gpuDevs, err := gpuDeviceConfigs(conf.DeviceDir, node.inv.Backend(), devs)
	if err != nil {
		return err
	}
	iso, err := buildIsolation(conf, node.libDirs, cfg, paths, mpsPipe, gpuDevs)
	if err != nil {
		return err
	}
	return iso.apply(cmd, u)
}

// newTaskHandle records what RecoverTask needs.
func (d *Driver) newTaskHandle(cfg *drivers.TaskConfig, h *taskHandle, a assignment, ms *memshareTaskState) (*drivers.TaskHandle, error) {
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
		CheckpointDir:  h.checkpointDir,
		Memshare:       ms,
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
