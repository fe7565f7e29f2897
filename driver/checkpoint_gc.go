package driver

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// checkpointGCPeriod is how often idle checkpoints are looked at.
const checkpointGCPeriod = time.Hour

// gcCheckpointsLoop collects garbage at start and then every period.
func (d *Driver) gcCheckpointsLoop(root string, retention time.Duration) {
	t := time.NewTicker(checkpointGCPeriod)
	defer t.Stop()
	for {
		d.gcCheckpoints(root, retention, time.Now())
		select {
		case <-d.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// gcCheckpoints removes, under root, the checkpoints no running task uses
// that are either superseded (the job was purged and registered again: a
// run with a higher create index exists) or idle longer than retention
// (nothing written since; a completed run's retired checkpoint counts from
// its last write too). It holds admitMu so no task starts meanwhile.
func (d *Driver) gcCheckpoints(root string, retention time.Duration, now time.Time) {
	d.admitMu.Lock()
	defer d.admitMu.Unlock()
	inUse := map[string]bool{}
	for _, h := range d.tasks.all() {
		if h.checkpointDir != "" && h.running() {
			inUse[h.checkpointDir] = true
		}
	}
	for _, jobDir := range globDirs(root, "*", "*") {
		d.gcJob(jobDir, inUse, retention, now)
	}
	removeEmptyDirs(root, 2)
}

func (d *Driver) gcJob(jobDir string, inUse map[string]bool, retention time.Duration, now time.Time) {
	runs := globDirs(jobDir, "*")
	newest := uint64(0)
	for _, r := range runs {
		if idx, ok := runIndex(r); ok && idx > newest {
			newest = idx
		}
	}
	for _, run := range runs {
		idx, ok := runIndex(run)
		superseded := ok && idx < newest && !anyUnder(inUse, run)
		for _, entry := range globDirs(run, "*", "*") {
			if inUse[entry] || strings.HasSuffix(entry, finishedSuffix) {
				continue
			}
			if superseded || now.Sub(newestMtime(entry)) > retention {
				d.logger.Info("removing checkpoint", "dir", entry, "superseded", superseded)
				if err := os.RemoveAll(entry); err != nil {
					d.logger.Warn("removing checkpoint", "dir", entry, "error", err)
				}
				_ = os.Remove(entry + finishedSuffix)
			}
		}
		removeEmptyDirs(run, 1)
		_ = os.Remove(run) // only if empty
	}
	_ = os.Remove(jobDir) // only if empty
}

// runIndex parses a "job-<create index>" run directory name.
func runIndex(dir string) (uint64, bool) {
	s, ok := strings.CutPrefix(filepath.Base(dir), "job-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

func anyUnder(set map[string]bool, dir string) bool {
	for p := range set {
		if strings.HasPrefix(p, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// globDirs lists the entries pattern levels below dir (files included at
// the last level, so finished markers are seen).
func globDirs(dir string, levels ...string) []string {
	m, _ := filepath.Glob(filepath.Join(append([]string{dir}, levels...)...))
	return m
}

// newestMtime is the latest modification time of path and its direct
// entries: writing a checkpoint file, or replacing one, moves it.
func newestMtime(path string) time.Time {
	fi, err := os.Lstat(path)
	if err != nil {
		return time.Time{}
	}
	t := fi.ModTime()
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.ModTime().After(t) {
			t = info.ModTime()
		}
	}
	return t
}

// removeEmptyDirs removes empty directories up to depth levels below dir
// (deepest first); os.Remove refuses non-empty ones.
func removeEmptyDirs(dir string, depth int) {
	for level := depth; level >= 1; level-- {
		pattern := make([]string, level)
		for i := range pattern {
			pattern[i] = "*"
		}
		for _, p := range globDirs(dir, pattern...) {
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
				_ = os.Remove(p)
			}
		}
	}
}
