// Command scaleplot draws the README's scale charts (issue #20) from the
// figures recorded in docs/scale/*.csv, so a chart never shows a number
// the tables do not:
//
//	go run ./cmd/scaleplot            # reads docs/scale/{live,policy}.csv, writes docs/scale/*.svg
//
// live.csv holds one row per mode per benchmark run (e2e/scale);
// policy.csv one row per ordering and variant (scheduler/policy/scalebench).
package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "scaleplot:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("scaleplot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "docs/scale", "directory holding live.csv and policy.csv; the charts are written beside them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	live, err := readTable(filepath.Join(*dir, "live.csv"))
	if err != nil {
		return err
	}
	runs, err := liveRuns(live)
	if err != nil {
		return err
	}
	if err := plotLive(runs, filepath.Join(*dir, "live.svg")); err != nil {
		return err
	}
	pol, err := readTable(filepath.Join(*dir, "policy.csv"))
	if err != nil {
		return err
	}
	rows, err := policyRows(pol)
	if err != nil {
		return err
	}
	return plotPolicy(rows, filepath.Join(*dir, "policy.svg"))
}

// table is a CSV file's rows keyed by its header.
type table struct {
	path string
	rows []map[string]string
}

// readTable reads a CSV file whose lines starting with '#' are comments
// and whose first other line names the columns.
func readTable(path string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("%s: want a header and at least one row", path)
	}
	t := &table{path: path}
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, name := range recs[0] {
			row[name] = rec[i]
		}
		t.rows = append(t.rows, row)
	}
	return t, nil
}

// need returns the named columns of row i, or an error naming the first
// one missing or empty.
func (t *table) need(i int, cols ...string) ([]string, error) {
	out := make([]string, len(cols))
	for k, c := range cols {
		v, ok := t.rows[i][c]
		if !ok || v == "" {
			return nil, fmt.Errorf("%s: row %d: column %q is missing or empty", t.path, i+1, c)
		}
		out[k] = v
	}
	return out, nil
}

var errNoRows = errors.New("no rows to plot")
