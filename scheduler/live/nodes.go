package live

import (
	"fmt"
	"strconv"

	"github.com/hashicorp/nomad/api"
)

// gpuAttr is the caravan driver's fingerprint prefix.
const gpuAttr = "driver.caravan.gpu."

// nodeGPU is one GPU of a node as the caravan driver fingerprints it.
type nodeGPU struct {
	Index     int
	UUID      string
	Model     string
	MemoryMiB int64
	// FreeFraction and FreeMemMiB are the driver's GPU ledger, including
	// tasks the scheduler does not manage.
	FreeFraction float64
	FreeMemMiB   int64
}

// nodeInfo is a schedulable node, with what constraints may test.
type nodeInfo struct {
	ID, Name, Pool string
	Datacenter     string
	Class          string
	Attrs, Meta    map[string]string
	GPUs           []nodeGPU
}

// usable reports whether the scheduler may place on the node at all.
func usable(n *api.Node) bool {
	return n.Status == "ready" && n.SchedulingEligibility == "eligible" && !n.Drain
}

// parseNode reads the caravan fingerprint. A node without the driver or
// without GPUs has no GPUs; malformed attributes are an error naming them.
func parseNode(n *api.Node) (nodeInfo, error) {
	info := nodeInfo{ID: n.ID, Name: n.Name, Pool: n.NodePool, Datacenter: n.Datacenter, Class: n.NodeClass,
		Attrs: n.Attributes, Meta: n.Meta}
	attrs := n.Attributes
	if d := n.Drivers["caravan"]; d != nil && len(d.Attributes) > 0 {
		attrs = d.Attributes
	}
	countS, ok := attrs[gpuAttr+"count"]
	if !ok {
		return info, nil
	}
	count, err := strconv.Atoi(countS)
	if err != nil || count < 0 {
		return info, fmt.Errorf("node %s: %scount = %q is not a GPU count", n.Name, gpuAttr, countS)
	}
	for i := 0; i < count; i++ {
		g, err := parseGPU(attrs, i)
		if err != nil {
			return info, fmt.Errorf("node %s: %w", n.Name, err)
		}
		info.GPUs = append(info.GPUs, g)
	}
	return info, nil
}

func parseGPU(attrs map[string]string, i int) (nodeGPU, error) {
	p := fmt.Sprintf("%s%d.", gpuAttr, i)
	g := nodeGPU{Index: i, UUID: attrs[p+"uuid"], Model: attrs[p+"model"], FreeFraction: 1}
	if g.UUID == "" {
		return g, fmt.Errorf("GPU %d has no %suuid", i, p)
	}
	var err error
	if g.MemoryMiB, err = attrInt(attrs, p+"memory_mib"); err != nil {
		return g, err
	}
	g.FreeMemMiB = g.MemoryMiB
	if k, ok := usageKey(attrs, p+"free_fraction"); ok {
		if g.FreeFraction, err = strconv.ParseFloat(attrs[k], 64); err != nil {
			return g, fmt.Errorf("%s = %q is not a number", k, attrs[k])
		}
	}
	if k, ok := usageKey(attrs, p+"free_memory_mib"); ok {
		if g.FreeMemMiB, err = attrInt(attrs, k); err != nil {
			return g, err
		}
	}
	return g, nil
}

// usageKey finds a GPU usage attribute: in Nomad's unique namespace (out
// of the node's computed class; see driver/fingerprint.go), or under its
// name before that change (an older driver).
func usageKey(attrs map[string]string, key string) (string, bool) {
	if _, ok := attrs["unique."+key]; ok {
		return "unique." + key, true
	}
	_, ok := attrs[key]
	return key, ok
}

func attrInt(attrs map[string]string, key string) (int64, error) {
	s := attrs[key]
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s = %q is not an integer", key, s)
	}
	return v, nil
}
