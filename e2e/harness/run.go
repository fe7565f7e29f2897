package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/internal/devcluster"
)

// FreePorts asks the kernel for n unused loopback TCP ports.
var FreePorts = devcluster.FreePorts

// RunCluster is the body of a package's TestMain run for tests that share
// one cluster: it starts one with opts (2 minutes at most), sets *c, runs
// the tests, stops the cluster, and removes its directory unless a test
// failed, when it says where the agent logs are kept.
func RunCluster(m *testing.M, opts Options, c **Cluster) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := Start(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start cluster:", err)
		return 1
	}
	*c = cl
	code := m.Run()
	if err := cl.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stop:", err)
	}
	if code == 0 {
		_ = os.RemoveAll(cl.Dir)
	} else {
		fmt.Fprintln(os.Stderr, "e2e: agent logs kept in", cl.Dir)
	}
	return code
}

// BuildCaravan builds the caravan CLI from the repository into dir, so a
// test runs the code under test rather than whatever bin/ holds.
func BuildCaravan(dir string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "caravan")
	build := exec.Command("go", "build", "-o", bin, "./cmd/caravan")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build caravan: %w", err)
	}
	return bin, nil
}

// RunWithCaravan is the body of a package's TestMain run for tests that
// start `caravan` commands: it finds the repository, builds the CLI into a
// temporary directory (removed afterwards), sets *repo and *bin, and runs
// the tests.
func RunWithCaravan(m *testing.M, repo, bin *string) int {
	root, err := RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "caravan-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	b, err := BuildCaravan(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*repo, *bin = root, b
	return m.Run()
}
