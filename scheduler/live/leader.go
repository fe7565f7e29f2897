package live

import (
	"context"
	"time"

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
		return s.lead(lctx)
	})
}
