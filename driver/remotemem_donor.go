package driver

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/nomad/plugins/drivers"
)

// donorBudget sums what donor tasks reserved but do not use. It is the
// donor server's capacity: when a donor task's own use grows back, the
// capacity shrinks and the server reclaims slabs.
type donorBudget struct {
	headroom atomic.Int64
	mu       sync.Mutex
	tasks    map[string]*donorTask
}

// donorTask is one task that lends memory.
type donorTask struct {
	reserved int64 // Nomad's memory_max (or memory) for the task
	limit    int64 // donate_memory; 0: no cap
	usage    atomic.Int64
	seen     atomic.Bool // a usage sample arrived
}

func newDonorBudget() *donorBudget {
	return &donorBudget{tasks: map[string]*donorTask{}}
}

func (b *donorBudget) setHeadroom(n int64) { b.headroom.Store(n) }

// lendable is what one task may lend now: reserved − used − headroom,
// capped by donate_memory; nothing until its use has been measured.
func (t *donorTask) lendable(headroom int64) int64 {
	if !t.seen.Load() {
		return 0
	}
	free := t.reserved - t.usage.Load() - headroom
	if t.limit > 0 && free > t.limit {
		free = t.limit
	}
	return max(free, 0)
}

// capacity is the donor server's Capacity function.
func (b *donorBudget) capacity() int64 {
	h := b.headroom.Load()
	b.mu.Lock()
	defer b.mu.Unlock()
	var sum int64
	for _, t := range b.tasks {
		sum += t.lendable(h)
	}
	return sum
}

func (b *donorBudget) add(id string, t *donorTask) {
	b.mu.Lock()
	b.tasks[id] = t
	b.mu.Unlock()
}

func (b *donorBudget) remove(id string) {
	b.mu.Lock()
	delete(b.tasks, id)
	b.mu.Unlock()
}

// reservedBytes is the memory Nomad reserved for a task: memory_max when
// set (the task may grow to it), else memory.
func reservedBytes(cfg *drivers.TaskConfig) int64 {
	if cfg.Resources == nil || cfg.Resources.NomadResources == nil {
		return 0
	}
	m := cfg.Resources.NomadResources.Memory
	return max(m.MemoryMaxMB, m.MemoryMB) << 20
}

// statsSource is the part of Nomad's executor the budget samples.
type statsSource interface {
	Stats(ctx context.Context, interval time.Duration) (<-chan *drivers.TaskResourceUsage, error)
}

// watchDonor registers a donor task and samples its memory use every
// second until ctx ends: the larger of the executor's stats (cgroup usage
// or RSS) and the resident memory of the task's process tree.
func (n *memshareNode) watchDonor(ctx context.Context, id string, cfg *drivers.TaskConfig, limit int64, pid int, src statsSource) error {
	n.mu.Lock()
	b := n.budget
	n.mu.Unlock()
	if b == nil {
		return errNoMemshare
	}
	t := &donorTask{reserved: reservedBytes(cfg), limit: limit}
	var fromStats atomic.Int64
	if ch, err := src.Stats(ctx, time.Second); err == nil {
		go func() {
			for u := range ch {
				if u != nil && u.ResourceUsage != nil && u.ResourceUsage.MemoryStats != nil {
					ms := u.ResourceUsage.MemoryStats
					fromStats.Store(int64(max(ms.Usage, ms.RSS)))
				}
			}
		}()
	}
	b.add(id, t)
	go func() {
		defer b.remove(id)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			t.usage.Store(max(fromStats.Load(), procTreeRSS(pid)))
			t.seen.Store(true)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return nil
}
