package driver

import (
	"os"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/client/lib/cgroupslib"
)

// TestMain prepares the cgroup tree the Nomad client would have created
// before any driver runs: on cgroups v1 the executor cannot place a task in
// a cpuset that has no CPUs.
func TestMain(m *testing.M) {
	if os.Getenv("NOMAD_TEST_LOG_LEVEL") == "" {
		os.Setenv("NOMAD_TEST_LOG_LEVEL", "ERROR") // the harness logs at TRACE otherwise
	}
	if os.Geteuid() == 0 && cgroupslib.GetMode() == cgroupslib.CG1 {
		cores := topology.UsableCores().String()
		if err := cgroupslib.Init(hclog.NewNullLogger(), cores); err == nil {
			_ = cgroupslib.WriteNomadCG1("cpuset", cgroupslib.SharePartition()+"/cpuset.cpus", cores)
		}
	}
	os.Exit(m.Run())
}
