// Package repo locates the repository and the traces tests and benchmarks
// read: the root is the folder holding go.mod above the working directory;
// the full traces live in ../shared/traces beside it (benchmarks, and the
// checks on whole files), and small excerpts with the same layout live in the
// repository's testdata/traces (unit tests), so a clone alone passes them.
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

// MustTraces is Traces for benchmarks: it fails when the folder is missing.
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

// SkipTB is the part of testing.TB that SharedTraces needs.
type SkipTB interface {
	TB
	Skipf(format string, args ...any)
}

// SharedTraces is Traces for the tests that check whole real files: without
// ../shared/traces beside the clone they skip, saying so (CI has them).
func SharedTraces(t SkipTB, sub ...string) string {
	t.Helper()
	p, err := Traces(sub...)
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		t.Skipf("whole-trace check skipped: ../shared/traces not found beside the repository (%v)", err)
	}
	return p
}

// TestData is the repository's testdata/traces (trace excerpts and the
// model profiles, in ../shared/traces' layout), joined with sub. It fails
// the test when the path is missing: these files are part of the clone.
func TestData(t TB, sub ...string) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(append([]string{root, "testdata", "traces"}, sub...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatal("repository test data missing: ", err)
	}
	return p
}
