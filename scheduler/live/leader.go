package live

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/hashicorp/nomad/api"
)

// releaseGrace bounds how long a shutting-down leader takes to release the
// lock, so a standby can take over at once instead of after TTL + delay.
const releaseGrace = 5 * time.Second

// Run campaigns for the scheduler lock and schedules while holding it. A
// standby keeps trying, so it takes over within LockTTL + LockDelay of the
// leader dying, and at once when the leader shuts down cleanly. It returns
// when ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	v := api.Variable{Namespace: s.cfg.Namespace, Path: s.cfg.LockPath,
		Lock: &api.VariableLock{TTL: s.cfg.LockTTL.String(), LockDelay: s.cfg.LockDelay.String()}}
	for ctx.Err() == nil {
		locks, err := s.api.Locks(api.WriteOptions{Namespace: s.cfg.Namespace}, v)
		if err != nil {
			return err
		}
		leaser := s.api.NewLockLeaser(locks, api.LockLeaserOptionWithWaitPeriod(time.Second))
		s.log.Info("waiting for the scheduler lock", "path", s.cfg.LockPath)
		if err := s.campaign(ctx, leaser); err != nil && ctx.Err() == nil {
			s.log.Warn("lost or could not take leadership; campaigning again", "error", err)
		}
		s.view.Store(&QueueView{Policy: s.pol.Name(), At: s.now().UTC()})
		sleep(ctx, time.Second)
	}
	return nil
}

// campaign runs one lock leaser. The leaser releases the lock with the
// context it was started with, so that context must outlive ctx: on
// shutdown the protected function ends first, then the lease is released.
func (s *Scheduler) campaign(ctx context.Context, leaser *api.LockLeaser) error {
	leaseCtx, cancelLease := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelLease()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		if s.leader.Load() {
			select {
			case <-done:
			case <-time.After(releaseGrace):
			}
		}
		cancelLease()
	}()
	return leaser.Start(leaseCtx, func(fctx context.Context) error {
		lctx, cancel := context.WithCancel(fctx)
		defer cancel()
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
		// a clean stop: the process is ending while the lock is held
		stopping := func() bool { return ctx.Err() != nil && fctx.Err() == nil }
		return s.lead(lctx, stopping)
	})
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
// then rounds on every event burst and every quantum until ctx ends. If
// it ends because the process stops (stopping), the state the save gap
// deferred is written before the lock is released; not after the lock
// was lost, where the write could only fail or race the next leader.
func (s *Scheduler) lead(ctx context.Context, stopping func() bool) error {
	if err := s.ensurePool(); err != nil {
		return err
	}
	st, err := s.store.load()
	if err != nil {
		return err
	}
	s.st, s.jobs, s.dirty = st, map[string]*cachedJob{}, false
	_, _ = s.saver.result() // a failure of an earlier term is not this one's
	s.mirror, s.feed, s.needFull, s.bg = nil, newFeed(), true, nil
	s.leader.Store(true)
	defer s.leader.Store(false)
	// A state write in flight ends before the lock is released.
	defer s.saver.wait()
	s.log.Info("leading", "policy", s.pol.Name(), "jobs_in_state", len(st.Jobs))
	if _, err := s.round(); err != nil {
		return err
	}
	go s.watch(ctx, s.feed, s.mirror.streamFrom())
	go s.pollProgress(ctx)
	err = s.loop(ctx)
	if err == nil && stopping() {
		if ferr := s.flush(); ferr != nil {
			s.log.Warn("could not write the state before releasing the lock", "error", ferr)
		}
	}
	return err
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
		_, err := s.round()
		s.collectBetweenRounds()
		if err != nil {
			if errors.Is(err, errStateTaken) {
				return err
			}
			s.metrics.errors.Inc()
			s.log.Warn("scheduling round failed; retrying", "error", err)
			s.poke()
			sleep(ctx, time.Second)
		}
	}
}

// collectBetweenRounds lets the policy ready the next round's memory
// (policy.Idler: the storage of a giant gang's slots, faulted in now
// rather than inside the decision; the "idle" stage of
// caravan_scheduler_round_stage_seconds_total), then starts the garbage
// collection the next round would probably start, now, on a goroutine of
// its own: it runs while the loop waits (the debounce, the quantum), and
// a round that comes sooner overlaps it as it would a cycle the runtime
// started.
func (s *Scheduler) collectBetweenRounds() {
	if i, ok := s.pol.(policy.Idler); ok {
		start := time.Now()
		i.Idle()
		s.metrics.stageSeconds.WithLabelValues("idle").Add(time.Since(start).Seconds())
	}
	s.gc.Idle()
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
