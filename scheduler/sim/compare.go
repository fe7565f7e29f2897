package sim

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Factory builds a fresh policy by name (policies keep state, so every
// run needs its own).
type Factory func(name string) (policy.Policy, error)

// Scenario is one trace on one cluster.
type Scenario struct {
	Name    string
	Cluster policy.Cluster
	Jobs    []Job
	Config  Config
}

// Compare runs each named policy on the scenario, at most parallel at a
// time (≤ 0: GOMAXPROCS), and returns results in the order of names. With
// progress set, one bar counts finished jobs over all runs.
func Compare(sc Scenario, names []string, mk Factory, parallel int, progress io.Writer) ([]*Result, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("no policies to compare")
	}
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	pols := make([]policy.Policy, len(names))
	for i, n := range names {
		p, err := mk(n)
		if err != nil {
			return nil, err
		}
		pols[i] = p
	}
	var done atomic.Int64
	stop := startBar(progress, sc.Name, len(sc.Jobs)*len(names), &done)
	defer stop()
	results := make([]*Result, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range pols {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cfg := sc.Config
			cfg.Progress, cfg.Done = nil, &done
			results[i], errs[i] = Run(cfg, sc.Cluster, sc.Jobs, pols[i])
			if errs[i] == nil {
				results[i].Trace = sc.Name
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s on %s: %w", names[i], sc.Name, err)
		}
	}
	return results, nil
}

// startBar draws a shared bar from a counter until stopped.
func startBar(w io.Writer, label string, total int, done *atomic.Int64) func() {
	if w == nil {
		return func() {}
	}
	b := NewBar(w, label, total)
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				b.draw(int(done.Load()))
				fmt.Fprintln(w)
				return
			case <-t.C:
				b.draw(int(done.Load()))
			}
		}
	}()
	return func() { close(quit); <-finished }
}
