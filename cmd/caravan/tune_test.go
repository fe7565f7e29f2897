package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTuneSim(t *testing.T) {
	var out, errb bytes.Buffer
	err := dispatch([]string{"tune", "sim", "-profiles", filepath.Join(tracesDir(t), "model-profiles"),
		"-gpus", "2,8", "-algorithms", "sha", "-models", "cifar10"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "| cifar10 | sha | 8 |") || !strings.Contains(out.String(), "fluid speed-up") {
		t.Fatalf("table:\n%s", out.String())
	}
	if err := dispatch([]string{"tune", "sim", "-gpus", "0"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "-gpus") {
		t.Fatalf("bad -gpus: %v", err)
	}
}

// TestTuneRunBadSpec: a bad spec is refused before Nomad is contacted, with
// the field named.
func TestTuneRunBadSpec(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "bad.hcl")
	src := `tune "x" {
  job = "j"
  metric = "loss"
  algorithm = "bayes"
  trials = 2
  budget { max = 10 }
  param "lr" {
    type = "uniform"
    min = 0
    max = 1
  }
}`
	if err := os.WriteFile(spec, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := dispatch([]string{"tune", "run", spec}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "algorithm: unknown algorithm \"bayes\"") {
		t.Fatalf("got %v", err)
	}
	if err := dispatch([]string{"tune", "run"}, &out, &errb); err == nil {
		t.Fatal("no spec accepted")
	}
}

func TestTuneHelp(t *testing.T) {
	for _, args := range [][]string{{"tune", "-h"}, {"tune", "run", "-h"}, {"tune", "status", "--help"}, {"tune", "sim", "-h"}} {
		var out, errb bytes.Buffer
		if err := dispatch(args, &out, &errb); err != nil {
			t.Errorf("%v: %v", args, err)
		}
		if out.Len()+errb.Len() == 0 {
			t.Errorf("%v printed nothing", args)
		}
	}
}
