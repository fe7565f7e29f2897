package profile

import (
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// readFloats reads a CSV with a header and returns, per row, the named
// columns as numbers, plus the first column raw (placement keys are
// strings). Errors name the file and line.
func readFloats(path string, cols ...string) (keys []string, vals [][]float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	recs, err := r.ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, nil, fmt.Errorf("%s: empty file", path)
	}
	idx := map[string]int{}
	for i, h := range recs[0] {
		idx[strings.TrimSpace(h)] = i
	}
	pos := make([]int, len(cols))
	for i, c := range cols {
		p, ok := idx[c]
		if !ok {
			return nil, nil, fmt.Errorf("%s:1: missing column %q", path, c)
		}
		pos[i] = p
	}
	for n, rec := range recs[1:] {
		row := make([]float64, len(cols))
		for i, p := range pos {
			if p >= len(rec) {
				return nil, nil, fmt.Errorf("%s:%d: short row", path, n+2)
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[p]), 64)
			if err != nil || v < 0 || v != v {
				return nil, nil, fmt.Errorf("%s:%d: column %s: %q is not a non-negative number", path, n+2, cols[i], rec[p])
			}
			row[i] = v
		}
		keys = append(keys, strings.TrimSpace(rec[0]))
		vals = append(vals, row)
	}
	return keys, vals, nil
}
