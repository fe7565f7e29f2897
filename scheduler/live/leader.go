package live

import (
	"context"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Run campaigns for the scheduler lock and schedules while holding it. A
// standby keeps trying, so it takes over within LockTTL + LockDelay of the
// leader dying (at once when the leader shuts down cleanly and releases).
// It returns when ctx ends.
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
		if err := leaser.Start(ctx, s.lead); err != nil && ctx.Err() == nil {
			s.log.Warn("lost or could not take leadership; campaigning again", "error", err)
		}
		s.view.Store(&QueueView{Policy: s.pol.Name(), At: s.now().UTC()})
		sleep(ctx, time.Second)
	}
	return nil
}
