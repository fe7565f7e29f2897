// Package aggsvc_e2e runs the aggregation service as a Nomad job registered
// in a real Consul dev agent, and a two-worker PyTorch DDP job through the
// caravan driver that finds it with `aggregator = "caravan-aggsvc"`.
package aggsvc_e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// key signs job tokens: aggsvc reads it from a Nomad Variable, the caravan
// plugins from their aggregator_key.
const key = "e2e-aggsvc-key-0123456789abcdef"

var cluster *harness.Cluster

func TestMain(m *testing.M) { harness.TestMain(m, run) }

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := harness.Start(ctx, harness.Options{Consul: true, RawExec: true, GPUs: harness.GPUs{Count: -1},
		PluginConfig: fmt.Sprintf("aggregator_key = %q", key)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start cluster:", err)
		return 1
	}
	cluster = c
	code := m.Run()
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stop:", err)
	}
	if code == 0 {
		os.RemoveAll(c.Dir)
	} else {
		fmt.Fprintln(os.Stderr, "e2e: agent logs kept in", c.Dir)
	}
	return code
}
