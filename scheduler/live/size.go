package live

import (
	"fmt"
	"strconv"
	"strings"
)

// mibUnits are the suffixes gpu_memory accepts, in MiB per unit. Longer
// suffixes come first so "MiB" is not read as "B".
var mibUnits = []struct {
	suffix string
	mib    float64
}{
	{"TiB", 1 << 20}, {"GiB", 1 << 10}, {"MiB", 1}, {"KiB", 1.0 / (1 << 10)},
	{"TB", 1e12 / (1 << 20)}, {"GB", 1e9 / (1 << 20)}, {"MB", 1e6 / (1 << 20)},
	{"T", 1 << 20}, {"G", 1 << 10}, {"M", 1},
}

// parseMiB reads sizes like "8GiB", "512MiB" or "2G"; a bare number is MiB.
func parseMiB(s string) (int64, error) {
	s = strings.TrimSpace(s)
	num, per := s, 1.0
	for _, u := range mibUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, per = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mib
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("size %q: want a non-negative number with a unit like 8GiB", s)
	}
	return int64(v*per + 0.5), nil
}
