package live

import (
	"context"
	"time"

	"github.com/hashicorp/nomad/api"
)

// watch follows Nomad's event stream and pokes the loop on every change;
// when the stream breaks it pokes too (the round re-reads everything) and
// reconnects from the last index it saw.
func (s *Scheduler) watch(ctx context.Context, index uint64) {
	topics := map[api.Topic][]string{
		api.TopicJob: {"*"}, api.TopicEvaluation: {"*"}, api.TopicAllocation: {"*"}, api.TopicNode: {"*"},
	}
	for ctx.Err() == nil {
		ch, err := s.api.EventStream().Stream(ctx, topics, index, &api.QueryOptions{Namespace: s.cfg.Namespace})
		if err != nil {
			s.log.Debug("event stream unavailable", "error", err)
			sleep(ctx, time.Second)
			continue
		}
		for evs := range ch {
			if evs.Err != nil {
				s.log.Debug("event stream broke", "error", evs.Err)
				break
			}
			if evs.IsHeartbeat() {
				continue
			}
			index = evs.Index
			s.poke()
		}
		s.poke()
		sleep(ctx, 500*time.Millisecond)
	}
}
