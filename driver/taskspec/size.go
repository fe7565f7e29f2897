package taskspec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
)

// maxMiB bounds a size (1 EiB) so no later sum overflows.
const maxMiB = 1 << 40

// ParseMiB reads a size the way Nomad does (go-humanize: "4GiB", "512MiB",
// "1.5 GB", "2g" = 2 GB) or a plain number of MiB, and returns whole MiB,
// rounding up so a request is never silently shrunk. Zero, negative,
// NaN, infinite and over-large sizes are errors.
func ParseMiB(s string) (uint64, error) {
	text := strings.TrimSpace(s)
	if text == "" {
		return 0, fmt.Errorf("empty size")
	}
	var mib float64
	if n, err := strconv.ParseFloat(text, 64); err == nil {
		mib = math.Ceil(n)
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, notASize(s)
		}
	} else {
		b, err := humanize.ParseBytes(text)
		if err != nil || strings.HasPrefix(text, "-") {
			if err != nil && strings.HasPrefix(err.Error(), "too large") {
				return 0, fmt.Errorf("%q is too large", s)
			}
			return 0, notASize(s)
		}
		mib = math.Ceil(float64(b) / (1 << 20))
	}
	if mib <= 0 {
		return 0, fmt.Errorf("%q must be greater than 0", s)
	}
	if mib > maxMiB {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return uint64(mib), nil
}

func notASize(s string) error {
	return fmt.Errorf("%q is not a size like \"4GiB\", \"512MiB\" or a number of MiB", s)
}
