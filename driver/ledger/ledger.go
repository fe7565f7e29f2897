// Package ledger is the node-local record of fractional GPU grants. Per GPU,
// granted fractions never sum past 1 and granted memory never past the total.
// It is persisted so a restarted plugin still knows what is taken.
package ledger

import (
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/caravan-dl/caravan/driver/gpu"
)

// Request is what one task asks of one GPU. Fraction in (0,1]; MemMiB 0 means
// "a share of memory proportional to Fraction". UUID, if set, pins the GPU
// (the scheduler's choice); otherwise the ledger picks best-fit.
type Request struct {
	Fraction float64
	MemMiB   uint64
	UUID     string
}

// Grant is what a task got.
type Grant struct {
	TaskID   string  `json:"task_id"`
	UUID     string  `json:"uuid"`
	Index    int     `json:"index"`
	Fraction float64 `json:"fraction"`
	MemMiB   uint64  `json:"mem_mib"`
}

// Usage is one GPU's committed share.
type Usage struct {
	UUID         string
	Index        int
	TotalMiB     uint64
	UsedFraction float64
	UsedMiB      uint64
	Tasks        int
}

// Ledger holds every grant on one node. It is safe for concurrent use and
// writes itself to its file after each change.
type Ledger struct {
	mu      sync.Mutex
	path    string
	devices []gpu.Device          // in index order
	byUUID  map[string]gpu.Device // present GPUs
	grants  map[string][]Grant    // by task ID
}

// Open loads the ledger kept at path (a missing file is an empty ledger)
// for the given GPUs. path "" keeps the ledger in memory only. Grants on
// GPUs that are no longer present are kept and reported by Stale.
func Open(path string, devices []gpu.Device) (*Ledger, error) {
	l := &Ledger{path: path, byUUID: map[string]gpu.Device{}, grants: map[string][]Grant{}}
	for _, d := range devices {
		if d.UUID == "" {
			return nil, fmt.Errorf("ledger: GPU %d has no UUID", d.Index)
		}
		if _, dup := l.byUUID[d.UUID]; dup {
			return nil, fmt.Errorf("ledger: GPU UUID %s is listed twice", d.UUID)
		}
		l.byUUID[d.UUID] = d
		l.devices = append(l.devices, d)
	}
	sort.Slice(l.devices, func(i, j int) bool { return l.devices[i].Index < l.devices[j].Index })
	if path == "" {
		return l, nil
	}
	grants, err := load(path)
	if err != nil {
		return nil, err
	}
	for _, g := range grants {
		if d, ok := l.byUUID[g.UUID]; ok {
			g.Index = d.Index // indexes may change across reboots; UUIDs do not
		}
		l.grants[g.TaskID] = append(l.grants[g.TaskID], g)
	}
	return l, nil
}

// Grants returns the task's grants (nil if it has none).
func (l *Ledger) Grants(taskID string) []Grant {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Grant(nil), l.grants[taskID]...)
}

// All returns every grant, ordered by task ID then GPU index.
func (l *Ledger) All() []Grant {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.allLocked()
}

func (l *Ledger) allLocked() []Grant {
	var all []Grant
	for _, gs := range l.grants {
		all = append(all, gs...)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].TaskID != all[j].TaskID {
			return all[i].TaskID < all[j].TaskID
		}
		return all[i].Index < all[j].Index
	})
	return all
}

// Stale returns the grants held on GPUs this node no longer has.
func (l *Ledger) Stale() []Grant {
	l.mu.Lock()
	defer l.mu.Unlock()
	var stale []Grant
	for _, g := range l.allLocked() {
		if _, ok := l.byUUID[g.UUID]; !ok {
			stale = append(stale, g)
		}
	}
	return stale
}

// Release drops the task's grants; an unknown task is a no-op.
func (l *Ledger) Release(taskID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	old, ok := l.grants[taskID]
	if !ok {
		return nil
	}
	delete(l.grants, taskID)
	if err := l.saveLocked(); err != nil {
		l.grants[taskID] = old
		return err
	}
	return nil
}

// Usage reports each present GPU's committed share, in index order.
func (l *Ledger) Usage() []Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Usage, 0, len(l.devices))
	for _, d := range l.devices {
		out = append(out, l.usageLocked(d))
	}
	return out
}

func (l *Ledger) usageLocked(d gpu.Device) Usage {
	u := Usage{UUID: d.UUID, Index: d.Index, TotalMiB: d.MemoryMiB}
	// Sum in a fixed order: float sums depend on it, and a reopened ledger
	// must report exactly the same usage.
	for _, g := range l.allLocked() {
		if g.UUID == d.UUID {
			u.UsedFraction += g.Fraction
			u.UsedMiB += g.MemMiB
			u.Tasks++
		}
	}
	return u
}

// FreeFraction is the share of the GPU not granted, never below 0.
func (u Usage) FreeFraction() float64 {
	return math.Max(0, 1-u.UsedFraction)
}

// FreeMiB is the memory not granted, never below 0.
func (u Usage) FreeMiB() uint64 {
	if u.UsedMiB >= u.TotalMiB {
		return 0
	}
	return u.TotalMiB - u.UsedMiB
}
