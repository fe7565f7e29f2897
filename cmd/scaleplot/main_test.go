package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCharts draws both charts from the checked-in figures.
func TestCharts(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"live.csv", "policy.csv"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", "scale", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run([]string{"-dir", dir}, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"live.svg", "policy.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.Contains(string(b), "<svg") {
			t.Fatalf("%s: not an SVG (%v)", f, err)
		}
	}
}

// TestBadFigures: a malformed table is refused with the file, row and
// column named, never drawn.
func TestBadFigures(t *testing.T) {
	cases := map[string]struct{ live, want string }{
		"missing column": {"run,nodes,jobs,mode\na,1,2,nomad\n", `column "jobs_per_s"`},
		"bad number":     {"run,nodes,jobs,mode,jobs_per_s\na,x,2,nomad,3\n", "row 1: nodes, jobs and jobs_per_s"},
		"unknown mode":   {"run,nodes,jobs,mode,jobs_per_s\na,1,2,slurm,3\n", `mode "slurm"`},
		"one mode only":  {"run,nodes,jobs,mode,jobs_per_s\na,1,2,nomad,3\n", "run a lacks one of its two modes"},
		"ragged row":     {"run,nodes,jobs,mode,jobs_per_s\na,1,2\n", "wrong number of fields"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "live.csv"), []byte(c.live), 0o644); err != nil {
				t.Fatal(err)
			}
			err := run([]string{"-dir", dir}, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "live.csv") {
				t.Fatalf("err = %v does not name the file", err)
			}
		})
	}
}
