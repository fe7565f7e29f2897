// Package scale measures the live scheduler at cluster scale: a real Nomad
// server, hundreds of simulated Nomad clients with caravan GPUs in this
// process (internal/nodesim), and thousands of gang jobs, submitted once
// straight to Nomad and once through `caravan scheduler`, side by side.
//
//	CARAVAN_E2E=1 CARAVAN_SCALE_NODES=300 CARAVAN_SCALE_JOBS=3000 \
//	  go test -run '^$' -bench Scale -benchtime 1x -timeout 60m ./e2e/scale/
//
// It is a benchmark, not a test: `make test` runs nothing here.
package scale

import (
	"testing"

	"github.com/caravan-dl/caravan/e2e/harness"
)

func TestMain(m *testing.M) { harness.TestMain(m, func(m *testing.M) int { return m.Run() }) }
