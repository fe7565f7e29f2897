package live

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/nomad/api"
)

// feed hands events from the stream goroutine to the round goroutine.
type feed struct {
	mu     sync.Mutex
	events []api.Event
	// broke says the stream was interrupted since the last drain: events
	// may have been missed (Nomad keeps only a short buffer, and none
	// across a server restart), so the round reconciles in full.
	broke bool
	more  chan struct{} // signalled when events arrive
}

func newFeed() *feed { return &feed{more: make(chan struct{}, 1)} }

func (f *feed) push(evs []api.Event, broke bool) {
	f.mu.Lock()
	f.events = append(f.events, evs...)
	f.broke = f.broke || broke
	f.mu.Unlock()
	select {
	case f.more <- struct{}{}:
	default:
	}
}

// drain takes what arrived since the last drain.
func (f *feed) drain() ([]api.Event, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	evs, broke := f.events, f.broke
	f.events, f.broke = nil, false
	return evs, broke
}

// streamTopics are what the mirror follows; Deployment only wakes the loop.
var streamTopics = map[api.Topic][]string{
	api.TopicJob: {"*"}, api.TopicAllocation: {"*"}, api.TopicNode: {"*"},
	api.TopicNodePool: {"*"}, api.TopicDeployment: {"*"},
}

// watch follows Nomad's event stream from index, feeding the events to
// the rounds and poking the loop. When the stream breaks it reconnects
// from the last index it saw and marks the feed broken, so the next round
// reconciles in full (what Nomad no longer buffers is read back).
func (s *Scheduler) watch(ctx context.Context, f *feed, index uint64) {
	for ctx.Err() == nil {
		ch, err := s.api.EventStream().Stream(ctx, streamTopics, index, &api.QueryOptions{Namespace: s.cfg.Namespace})
		if err != nil {
			s.log.Debug("event stream unavailable", "error", err)
			f.push(nil, true)
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
			index = max(index, evs.Index)
			f.push(evs.Events, false)
			s.poke()
		}
		if ctx.Err() != nil {
			return
		}
		f.push(nil, true)
		s.poke()
		sleep(ctx, 500*time.Millisecond)
	}
}
