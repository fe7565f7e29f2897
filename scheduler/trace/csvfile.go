package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// table is a CSV file read with its header, remembering line numbers so
// every error can say where it came from.
type table struct {
	path string
	cols map[string]int
	rows []row
}

type row struct {
	line   int
	fields []string
}

// readTable reads a whole CSV file and checks the required columns exist.
// Blank lines (e.g. a trailing one) are skipped.
func readTable(path string, required ...string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: reading header: %w", path, err)
	}
	t := &table{path: path, cols: map[string]int{}}
	for i, h := range header {
		t.cols[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range required {
		if _, ok := t.cols[c]; !ok {
			return nil, fmt.Errorf("%s:1: missing column %q (have %s)", path, c, strings.Join(header, ","))
		}
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		t.rows = append(t.rows, row{line: line, fields: rec})
	}
	return t, nil
}

func (t *table) has(col string) bool { _, ok := t.cols[col]; return ok }

func (t *table) where(r row) string { return fmt.Sprintf("%s:%d", t.path, r.line) }

// str returns a column's raw value ("" when the row is short).
func (t *table) str(r row, col string) string {
	i, ok := t.cols[col]
	if !ok || i >= len(r.fields) {
		return ""
	}
	return strings.TrimSpace(r.fields[i])
}

func (t *table) float(r row, col string) (float64, error) {
	s := t.str(r, col)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: column %s: %q is not a number", t.where(r), col, s)
	}
	return v, nil
}

// nonNeg parses a float that must be ≥ 0 (and finite).
func (t *table) nonNeg(r row, col string) (float64, error) {
	v, err := t.float(r, col)
	if err != nil {
		return 0, err
	}
	if v < 0 || v != v || v > 1e15 {
		return 0, fmt.Errorf("%s: column %s: %v must be a non-negative finite number", t.where(r), col, v)
	}
	return v, nil
}

// posInt parses an integer that must be ≥ 1.
func (t *table) posInt(r row, col string) (int, error) {
	s := t.str(r, col)
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s: column %s: %q is not an integer", t.where(r), col, s)
	}
	if v < 1 {
		return 0, fmt.Errorf("%s: column %s: %d must be at least 1", t.where(r), col, v)
	}
	return v, nil
}
