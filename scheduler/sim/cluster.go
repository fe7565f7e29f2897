package sim

import (
	"fmt"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/trace"
)

// DefaultGPUMemMiB is the memory of a simulated GPU when a trace does not
// say (a 32 GiB V100, the Philly/Tiresias era's large part).
const DefaultGPUMemMiB = 32 * 1024

// Homogeneous builds nodes × gpusPerNode GPUs, nodesPerRack nodes behind
// each switch (0 = one rack).
func Homogeneous(nodes, gpusPerNode, nodesPerRack int) (policy.Cluster, error) {
	if nodes < 1 || gpusPerNode < 1 {
		return policy.Cluster{}, fmt.Errorf("cluster needs at least one node and one GPU per node, got %d × %d", nodes, gpusPerNode)
	}
	if nodesPerRack <= 0 {
		nodesPerRack = nodes
	}
	c := policy.Cluster{Nodes: make([]policy.Node, nodes)}
	for i := range c.Nodes {
		c.Nodes[i] = policy.Node{
			Name:      fmt.Sprintf("n%04d", i),
			Rack:      fmt.Sprintf("r%03d", i/nodesPerRack),
			GPUs:      gpuList(gpusPerNode, "V100", DefaultGPUMemMiB),
			CPUMilli:  int64(gpusPerNode) * 8000,
			MemoryMiB: int64(gpusPerNode) * 64 * 1024,
			LinkGbps:  100,
		}
	}
	return c, nil
}

// WithGPUs sizes a homogeneous cluster to hold at least gpus GPUs.
func WithGPUs(gpus, gpusPerNode, nodesPerRack int) (policy.Cluster, error) {
	if gpus < 1 || gpusPerNode < 1 {
		return policy.Cluster{}, fmt.Errorf("want a positive GPU count and GPUs per node, got %d and %d", gpus, gpusPerNode)
	}
	if gpus < gpusPerNode {
		return Homogeneous(1, gpus, nodesPerRack)
	}
	return Homogeneous((gpus+gpusPerNode-1)/gpusPerNode, gpusPerNode, nodesPerRack)
}

// FromSpec builds a Tiresias cluster spec: one rack per switch.
func FromSpec(s trace.ClusterSpec) (policy.Cluster, error) {
	return Homogeneous(s.Switches*s.NodesPerSwitch, s.GPUsPerNode, s.NodesPerSwitch)
}

// gpuMem maps Alibaba GPU model names to memory; unknown models get the
// default.
var gpuMem = map[string]int64{"P100": 16384, "T4": 16384, "V100M16": 16384, "V100M32": 32768, "A10": 24576}

// FromNodes builds a heterogeneous cluster (Alibaba node lists), 32 nodes
// per rack in file order.
func FromNodes(nodes []trace.NodeSpec) (policy.Cluster, error) {
	if len(nodes) == 0 {
		return policy.Cluster{}, fmt.Errorf("no nodes")
	}
	c := policy.Cluster{Nodes: make([]policy.Node, len(nodes))}
	for i, n := range nodes {
		mem, ok := gpuMem[n.Model]
		if !ok {
			mem = DefaultGPUMemMiB
		}
		c.Nodes[i] = policy.Node{
			Name: n.Name, Rack: fmt.Sprintf("r%03d", i/32),
			GPUs: gpuList(n.GPUs, n.Model, mem), CPUMilli: n.CPUMilli, MemoryMiB: n.MemMiB, LinkGbps: 25,
		}
	}
	return c, nil
}

func gpuList(n int, model string, mem int64) []policy.GPU {
	g := make([]policy.GPU, n)
	for i := range g {
		g[i] = policy.GPU{Index: i, Model: model, MemoryMiB: mem}
	}
	return g
}

// TotalGPUs counts a cluster's GPUs.
func TotalGPUs(c policy.Cluster) int {
	n := 0
	for _, nd := range c.Nodes {
		n += len(nd.GPUs)
	}
	return n
}

// maxPerNode is the largest node's GPU count (the consolidated shape's unit).
func maxPerNode(c policy.Cluster) int {
	m := 1
	for _, nd := range c.Nodes {
		m = max(m, len(nd.GPUs))
	}
	return m
}
