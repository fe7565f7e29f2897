// Package repo locates the repository and the shared traces beside it, for
// tests, benchmarks and the demo: the root is the folder holding go.mod
// above the working directory, and traces live in ../shared/traces.
package repo

import (
	"errors"
	"os"
	"path/filepath"
)

// Root walks up from the working directory to the folder holding go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repo: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Traces is ../shared/traces beside the repository, joined with sub.
func Traces(sub ...string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{filepath.Dir(root), "shared", "traces"}, sub...)...), nil
}

// TB is the part of testing.TB the helpers need.
type TB interface {
	Helper()
	Fatal(args ...any)
}

// MustTraces is Traces for tests: it fails the test when the folder is missing.
func MustTraces(t TB, sub ...string) string {
	t.Helper()
	p, err := Traces(sub...)
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		t.Fatal("shared traces not found: ", err)
	}
	return p
}
