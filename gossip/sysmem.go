package gossip

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ReadMemInfo returns total and used memory in bytes from /proc/meminfo
// (used = MemTotal − MemAvailable, what the kernel could not hand out).
func ReadMemInfo(path string) (total, used uint64, err error) {
	if path == "" {
		path = "/proc/meminfo"
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	vals := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		key := strings.TrimSuffix(fields[0], ":")
		if key != "MemTotal" && key != "MemAvailable" {
			continue
		}
		kib, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %s: %w", path, key, err)
		}
		vals[key] = kib << 10
	}
	total, avail := vals["MemTotal"], vals["MemAvailable"]
	if total == 0 {
		return 0, 0, fmt.Errorf("%s: no MemTotal", path)
	}
	return total, total - min(avail, total), nil
}
