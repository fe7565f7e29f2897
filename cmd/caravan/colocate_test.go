package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// Bad bench flags are refused by name before any data is read.
func TestColocateBenchFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-margin-target", "1"}, "-margin-target"},
		{[]string{"-margin-target", "-0.1"}, "-margin-target"},
		{[]string{"-held-out", "both"}, "-held-out"},
		{[]string{"-explore", "-explore-window", "0"}, "-explore-window"},
		{[]string{"-explore-restart", "-1"}, "-explore-restart"},
		{[]string{"-explore-factor", "0.9"}, "-explore-factor"},
		{[]string{"-explore-factor", "NaN"}, "-explore-factor"},
		{[]string{"-explore-inflight", "-2"}, "-explore-inflight"},
		{[]string{"-explore-window", "soon"}, "-explore-window"},
		{[]string{"-pool", "all"}, "-pool"},
		{[]string{"-pool", "held-out", "-held-out", "model"}, "-pool"},
	} {
		err := colocateBench(c.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %s", c.args, err, c.want)
		}
	}
	for _, run := range []func([]string, io.Writer, io.Writer) error{colocateBench, colocateEval} {
		if err := run([]string{"-h"}, io.Discard, io.Discard); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("-h: %v, want flag.ErrHelp", err)
		}
	}
}
