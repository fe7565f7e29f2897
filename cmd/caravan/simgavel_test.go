package main

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/internal/repo"
)

// caravan sim compare --workload gavel runs each co-location rule on the
// repository's Philly excerpt with the Gavel excerpt found next to it, and
// prints the co-location table.
func TestSimGavelWorkload(t *testing.T) {
	tr := "philly:" + repo.TestData(t, "philly", "philly_jobs.csv")
	args := []string{"compare", "--trace", tr, "--max-jobs", "120", "--batch", "--gpus", "8", "--gpus-per-node", "4",
		"--workload", "gavel", "--quiet", "--plots", "none",
		"--policies", "fifo+colocate-exclusive,fifo+colocate-oracle,fifo+colocate-naive"}
	var out, errb bytes.Buffer
	if err := runSim(args, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	rows := colocRows(out.String())
	// columns: measured 4, >bound 6, sustained 7
	if len(rows) != 3 || rows["fifo+colocate-exclusive"][4] != "0" || rows["fifo+colocate-oracle"][4] == "0" ||
		rows["fifo+colocate-oracle"][6] != "0" || rows["fifo+colocate-naive"][7] != rows["fifo+colocate-naive"][6] {
		t.Fatalf("co-location table %v in\n%s", rows, out.String())
	}
	if !strings.Contains(errb.String(), "gavel workload:") {
		t.Errorf("no workload summary: %s", errb.String())
	}
	bad := append(args[:len(args)-1:len(args)-1], "fifo+colocate-sometimes")
	if err := runSim(bad, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "sometimes") {
		t.Errorf("unknown rule: %v", err)
	}
	bad = append(args[:len(args)-1:len(args)-1], "fifo+colocate-oracle", "--explore-cap", "-1")
	if err := runSim(bad, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "explore-cap") {
		t.Errorf("cap -1: %v", err)
	}
	bad = append(args[:len(args)-1:len(args)-1], "fifo+colocate-oracle", "--colocate-bound", "0.5")
	if err := runSim(bad, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "colocate-bound") {
		t.Errorf("bound 0.5: %v", err)
	}
}

// colocRows are the co-location table's rows by policy, split in fields.
func colocRows(out string) map[string][]string {
	rows := map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 11 && strings.HasPrefix(f[0], "fifo+colocate-") {
			rows[f[0]] = f
		}
	}
	return rows
}

// fifo+colocate-explore on the whole Gavel file (its held-out predictor
// needs every model): probes, some over the bound, none sustained, and the
// same table twice.
func TestSimGavelExplore(t *testing.T) {
	gavel := filepath.Join(repo.SharedTraces(t, "gavel-throughputs"), "simulation_throughputs.json")
	tr := "philly:" + repo.TestData(t, "philly", "philly_jobs.csv")
	args := []string{"compare", "--trace", tr, "--max-jobs", "120", "--batch", "--gpus", "8", "--gpus-per-node", "4",
		"--workload", "gavel", "--gavel", gavel, "--quiet", "--plots", "none", "--policies", "fifo+colocate-explore"}
	var first string
	for range 2 {
		var out, errb bytes.Buffer
		if err := runSim(args, &out, &errb); err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		ex := colocRows(out.String())["fifo+colocate-explore"]
		// columns: >bound 6, sustained 7, probes 8, failed 9
		if ex == nil || ex[7] != "0" || ex[8] == "0" || ex[9] == "0" || ex[6] != ex[9] {
			t.Fatalf("explore row %v in\n%s", ex, out.String())
		}
		if first != "" && out.String() != first {
			t.Fatalf("two runs differ:\n%s\n%s", first, out.String())
		}
		first = out.String()
	}
}
