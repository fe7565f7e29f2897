package driver

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits maps a suffix to its size in bytes. Binary and decimal units are
// both accepted because jobspec authors write either.
var sizeUnits = []struct {
	suffix string
	bytes  float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
}

// parseMiB reads "4GiB", "512MiB", "1.5 GB" or a plain number of MiB and
// returns whole MiB, rounding up so a request is never silently shrunk.
func parseMiB(s string) (uint64, error) {
	text := strings.ToLower(strings.TrimSpace(s))
	if text == "" {
		return 0, fmt.Errorf("empty size")
	}
	scale := float64(1 << 20)
	for _, u := range sizeUnits {
		if strings.HasSuffix(text, u.suffix) {
			text, scale = strings.TrimSpace(strings.TrimSuffix(text, u.suffix)), u.bytes
			break
		}
	}
	n, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("%q is not a size like \"4GiB\", \"512MiB\" or a number of MiB", s)
	}
	if n <= 0 {
		return 0, fmt.Errorf("%q must be greater than 0", s)
	}
	mib := math.Ceil(n * scale / (1 << 20))
	if mib > 1<<40 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return uint64(mib), nil
}
