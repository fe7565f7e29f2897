// Package policytest builds snapshots for policy tests and benchmarks and
// checks the invariants every Decision must keep.
package policytest

import (
	"fmt"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// ClusterSpec describes a homogeneous cluster.
type ClusterSpec struct {
	Racks, NodesPerRack, GPUsPerNode int
	GPUMemMiB                        int64   // default 16384
	LinkGbps                         float64 // default 10
}

// Cluster builds nodes named r<rack>n<node>.
func Cluster(c ClusterSpec) policy.Cluster {
	if c.GPUMemMiB == 0 {
		c.GPUMemMiB = 16384
	}
	if c.LinkGbps == 0 {
		c.LinkGbps = 10
	}
	var cl policy.Cluster
	for r := 0; r < c.Racks; r++ {
		for n := 0; n < c.NodesPerRack; n++ {
			node := policy.Node{Name: fmt.Sprintf("r%dn%d", r, n), Rack: fmt.Sprintf("r%d", r),
				LinkGbps: c.LinkGbps, CPUMilli: 64000, MemoryMiB: 256 << 10}
			for g := 0; g < c.GPUsPerNode; g++ {
				node.GPUs = append(node.GPUs, policy.GPU{Index: g, Model: "V100", MemoryMiB: c.GPUMemMiB})
			}
			cl.Nodes = append(cl.Nodes, node)
		}
	}
	return cl
}

// Job is a queued whole-GPU job.
func Job(id string, workers int, submit policy.Seconds) *policy.Job {
	return &policy.Job{ID: id, Workers: workers, Fraction: 1, Submit: submit, QueuedSince: submit, State: policy.Queued}
}

// Run marks j running on p and charges p to the cluster's GPUs.
func Run(c *policy.Cluster, j *policy.Job, p policy.Placement) {
	j.State = policy.Running
	j.Placement = p
	for _, s := range p.Slots {
		for ni := range c.Nodes {
			if c.Nodes[ni].Name != s.Node {
				continue
			}
			for gi := range c.Nodes[ni].GPUs {
				if g := &c.Nodes[ni].GPUs[gi]; g.Index == s.GPU {
					g.UsedFraction += s.Fraction
					g.UsedMemoryMiB += s.MemMiB
					g.Util += j.Util
				}
			}
		}
	}
}

// Whole is a placement of whole GPUs on one node.
func Whole(node string, mem int64, gpus ...int) policy.Placement {
	var p policy.Placement
	for _, g := range gpus {
		p.Slots = append(p.Slots, policy.Slot{Node: node, GPU: g, Fraction: 1, MemMiB: mem})
	}
	return p
}
