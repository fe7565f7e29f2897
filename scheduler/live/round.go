package live

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/nomad/api"
)

// saveEvery bounds how long accrued service may stay unsaved.
const saveEvery = 2 * time.Second

// round reads the cluster, asks the policy, applies its decision and
// saves state. It returns the Nomad index it read at.
func (s *Scheduler) round() (uint64, error) {
	start := s.now()
	w, err := s.observe()
	if err != nil {
		return 0, err
	}
	now := s.now()
	es := s.classify(w, unix(now))
	s.progressTargets(es, w.allocs)
	l := newLedger(w.nodes, es, s.touch(es, now))
	snap := s.snapshot(l, es, unix(now))
	dec := s.pol.Decide(snap)
	rk := ranks(s.pol, snap)
	waiting := s.apply(w, es, l, dec, now)
	v := buildView(s.pol.Name(), es, rk, waiting, now)
	s.showProgress(v)
	s.view.Store(v)
	s.metrics.rounds.Add(1)
	s.metrics.roundSeconds.observe(s.now().Sub(start).Seconds())
	return w.index, s.save(now)
}

// save writes state when something important changed, or periodically.
func (s *Scheduler) save(now time.Time) error {
	if !s.dirty && now.Sub(s.savedAt) < saveEvery {
		return nil
	}
	if err := s.store.save(s.st); err != nil {
		return err
	}
	s.dirty, s.savedAt = false, now
	return nil
}

// ensurePool creates the queue pool if it is missing.
func (s *Scheduler) ensurePool() error {
	_, _, err := s.api.NodePools().Info(s.cfg.QueuePool, nil)
	if err == nil {
		return nil
	}
	pool := &api.NodePool{Name: s.cfg.QueuePool,
		Description: "Caravan's queue: no node joins it; the caravan scheduler admits jobs from here."}
	if _, err := s.api.NodePools().Register(pool, nil); err != nil {
		return fmt.Errorf("create node pool %s: %w", s.cfg.QueuePool, err)
	}
	s.log.Info("created the queue node pool", "pool", s.cfg.QueuePool)
	return nil
}

// lead runs the scheduler while this instance holds the lock: load state,
// then rounds on every event burst and every quantum until ctx ends.
func (s *Scheduler) lead(ctx context.Context) error {
	if err := s.ensurePool(); err != nil {
		return err
	}
	st, err := s.store.load()
	if err != nil {
		return err
	}
	s.st, s.jobs, s.dirty = st, map[string]*cachedJob{}, false
	s.leader.Store(true)
	defer s.leader.Store(false)
	s.log.Info("leading", "policy", s.pol.Name(), "jobs_in_state", len(st.Jobs))
	index, err := s.round()
	if err != nil {
		return err
	}
	go s.watch(ctx, index)
	go s.pollProgress(ctx)
	return s.loop(ctx)
}

func (s *Scheduler) loop(ctx context.Context) error {
	tick := time.NewTicker(s.cfg.Quantum)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-s.wake:
			// Let the rest of an event burst arrive first.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(s.cfg.Debounce):
			}
		}
		if _, err := s.round(); err != nil {
			if errors.Is(err, errStateTaken) {
				return err
			}
			s.metrics.errors.Add(1)
			s.log.Warn("scheduling round failed; retrying", "error", err)
			s.poke()
			sleep(ctx, time.Second)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
