// Package harness is the end-to-end tests' view of internal/devcluster (the
// product's local-cluster launcher), plus the tests' TestMain. It adds no
// behaviour of its own: the names below are the devcluster ones.
package harness

import "github.com/caravan-dl/caravan/internal/devcluster"

type (
	// Cluster is a running local cluster.
	Cluster = devcluster.Cluster
	// Options shape a cluster.
	Options = devcluster.Options
	// Agent is one agent process.
	Agent = devcluster.Agent
	// GPUs are the simulated GPUs each client declares.
	GPUs = devcluster.GPUs
	// Binaries are the executables a cluster needs.
	Binaries = devcluster.Binaries
)

// TaskWorkloads is where caravan tasks find the repository's workloads/.
const TaskWorkloads = devcluster.TaskWorkloads

var (
	// Start launches a cluster and waits until it is ready.
	Start = devcluster.Start
	// FindBinaries locates bin/nomad, bin/consul and the plugin.
	FindBinaries = devcluster.FindBinaries
	// RepoRoot is the folder holding go.mod.
	RepoRoot = devcluster.RepoRoot
	// SharedTraces is ../shared/traces beside the repository.
	SharedTraces = devcluster.SharedTraces
	// TaskState matches an allocation whose task reached a state.
	TaskState = devcluster.TaskState
	// Events renders a task's events.
	Events = devcluster.Events
)
