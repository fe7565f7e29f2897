package live

import (
	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// buildPolicy makes the configured policy from the shared registry, so the
// live scheduler runs exactly the code the simulator evaluates.
func buildPolicy(cfg Config) (policy.Policy, error) {
	rc := registry.Config{}
	if len(cfg.LASLimits) > 0 {
		rc.Queues.Limits = cfg.LASLimits
		rc.Queues.Queues = len(cfg.LASLimits) + 1
	}
	return registry.New(cfg.Policy, rc)
}

// rank is a job's place in the policy's priority order.
type rank struct {
	Rank  int // 0 = highest priority
	Queue int // the ordering's priority queue (Tiresias), 0 if it has none
}

// ranks asks the policy's ordering for priorities, when the policy is a
// framework; nil otherwise. Only for explanation: decisions come from Decide.
func ranks(p policy.Policy, s *policy.Snapshot) map[string]rank {
	f, ok := p.(*policy.Framework)
	if !ok {
		return nil
	}
	out := map[string]rank{}
	for i, r := range f.Order.Order(s) {
		out[r.Job.ID] = rank{Rank: i, Queue: r.Queue}
	}
	return out
}
