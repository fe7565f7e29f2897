package devcluster

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/caravan-dl/caravan/internal/repo"
)

// RepoRoot is the folder holding go.mod above the working directory.
func RepoRoot() (string, error) { return repo.Root() }

// Binaries are the executables a cluster needs, built by `make tools build`.
type Binaries struct {
	Nomad     string
	Consul    string
	PluginDir string
	Caravan   string
}

// FindBinaries locates the built binaries under <repo>/bin and says which is
// missing and how to build it.
func FindBinaries() (Binaries, error) {
	root, err := RepoRoot()
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{
		Nomad:     filepath.Join(root, "bin", "nomad"),
		Consul:    filepath.Join(root, "bin", "consul"),
		PluginDir: filepath.Join(root, "bin", "plugins"),
		Caravan:   filepath.Join(root, "bin", "caravan"),
	}
	for _, p := range []string{b.Nomad, filepath.Join(b.PluginDir, "caravan-driver")} {
		if _, err := os.Stat(p); err != nil {
			return b, errors.New("devcluster: " + p + " is missing: run `make tools build` first")
		}
	}
	return b, nil
}

// SharedTraces is ../shared/traces beside the repository.
func SharedTraces() (string, error) { return repo.Traces() }
