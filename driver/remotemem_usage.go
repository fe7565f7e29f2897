package driver

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// procTreeRSS sums the resident memory of pid and all its descendants from
// /proc. The executor's stats alone can miss a task's children or report
// only part of its cgroup, and under-measuring a donor would over-lend.
func procTreeRSS(pid int) int64 {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		p, pp, ok := readPPID(path)
		if ok {
			children[pp] = append(children[pp], p)
		}
	}
	page := int64(os.Getpagesize())
	var sum int64
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		p := queue[0]
		sum += rssPages(p) * page
		queue = append(queue, children[p]...)
	}
	return sum
}

// readPPID parses "pid (comm) state ppid ..." (comm may hold spaces).
func readPPID(path string) (int, int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(string(bytes.TrimSpace(b[:bytes.IndexByte(b, '(')])))
	fields := bytes.Fields(b[end+1:])
	if err1 != nil || len(fields) < 2 {
		return 0, 0, false
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	return pid, ppid, err == nil
}

// rssPages is the second field of /proc/<pid>/statm.
func rssPages(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[1]), 10, 64)
	return n
}
