// Package tune tests `caravan tune` end to end: a real Nomad agent with the
// caravan driver and simulated GPUs, the tune-digits parameterized job
// running real PyTorch trials, and the tuner killed and restarted mid-run.
package tune

import (
	"testing"

	"github.com/caravan-dl/caravan/e2e/harness"
)

var (
	caravanBin string
	repo       string
)

func TestMain(m *testing.M) { harness.TestMain(m, run) }

func run(m *testing.M) int {
	return harness.RunWithCaravan(m, &repo, &caravanBin)
}
