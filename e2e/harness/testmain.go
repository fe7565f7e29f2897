package harness

import (
	"fmt"
	"os"
	"testing"
)

// TestMain is the shared entry of the e2e packages: without built binaries
// it skips (exit 0) unless CARAVAN_E2E is set, as `make test` does, where a
// missing binary is a failure. Otherwise it exits with run's code.
func TestMain(m *testing.M, run func(*testing.M) int) {
	if _, err := FindBinaries(); err != nil {
		if os.Getenv("CARAVAN_E2E") != "" {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "skipping e2e:", err)
		os.Exit(0)
	}
	os.Exit(run(m))
}
