package main

import (
	"bytes"
	"io"
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
	rows := map[string][]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) == 7 && strings.HasPrefix(f[0], "fifo+colocate-") {
			rows[f[0]] = f
		}
	}
	if len(rows) != 3 || rows["fifo+colocate-exclusive"][4] != "0" || rows["fifo+colocate-oracle"][4] == "0" ||
		rows["fifo+colocate-oracle"][6] != "0" {
		t.Fatalf("co-location table %v in\n%s", rows, out.String())
	}
	if !strings.Contains(errb.String(), "gavel workload:") {
		t.Errorf("no workload summary: %s", errb.String())
	}
	bad := append(args[:len(args)-1:len(args)-1], "fifo+colocate-sometimes")
	if err := runSim(bad, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "sometimes") {
		t.Errorf("unknown rule: %v", err)
	}
	bad = append(args[:len(args)-1:len(args)-1], "fifo+colocate-oracle", "--colocate-bound", "0.5")
	if err := runSim(bad, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "colocate-bound") {
		t.Errorf("bound 0.5: %v", err)
	}
}
