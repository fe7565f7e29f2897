// Package aggsvc_e2e runs the aggregation service as a Nomad job registered
// in a real Consul dev agent, and a two-worker PyTorch DDP job through the
// caravan driver that finds it with `aggregator = "caravan-aggsvc"`.
package aggsvc_e2e

import (
	"fmt"
	"testing"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// key signs job tokens: aggsvc reads it from a Nomad Variable, the caravan
// plugins from their aggregator_key.
const key = "e2e-aggsvc-key-0123456789abcdef"

var cluster *harness.Cluster

func TestMain(m *testing.M) { harness.TestMain(m, run) }

func run(m *testing.M) int {
	return harness.RunCluster(m, harness.Options{Consul: true, RawExec: true, GPUs: harness.GPUs{Count: -1},
		PluginConfig: fmt.Sprintf("aggregator_key = %q", key)}, &cluster)
}
