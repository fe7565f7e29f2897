// Package tune tests `caravan tune` end to end: a real Nomad agent with the
// caravan driver and simulated GPUs, the tune-digits parameterized job
// running real PyTorch trials, and the tuner killed and restarted mid-run.
package tune

import (
	"fmt"
	"os"
	"testing"

	"github.com/caravan-dl/caravan/e2e/harness"
)

var (
	caravanBin string
	repo       string
)

func TestMain(m *testing.M) { harness.TestMain(m, run) }

func run(m *testing.M) int {
	var err error
	if repo, err = harness.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "caravan-tune-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if caravanBin, err = harness.BuildCaravan(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
