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
	events []event
	// broke says the stream was interrupted since the last drain: events
	// may have been missed (Nomad keeps only a short buffer, and none
	// across a server restart), so the round reconciles in full.
	broke bool
	more  chan struct{} // signalled when events arrive
}

func newFeed() *feed { return &feed{more: make(chan struct{}, 1)} }

func (f *feed) push(evs []event, broke bool) {
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
func (f *feed) drain() ([]event, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	evs, broke := f.events, f.broke
	f.events, f.broke = nil, false
	return evs, broke
}

// streamTopics are what the mirror follows; Deployment only wakes the loop,
// Evaluation keeps the pending evaluations (evals.go).
// NodePool is left out on purpose: Nomad streams that topic to management
// tokens only (it cannot filter pools by ACL), so with the least-privilege
// policy (acl-policy.hcl) asking for it makes Nomad refuse the whole
// stream. Pools are read in full instead (see observePools).
var streamTopics = map[api.Topic][]string{
	api.TopicJob: {"*"}, api.TopicAllocation: {"*"}, api.TopicNode: {"*"},
	api.TopicDeployment: {"*"}, api.TopicEvaluation: {"*"},
}

// refusedAfter is how many streams in a row that close before carrying a
// single event mean Nomad refuses the stream (typically an ACL token that
// lacks read-job or node read); the scheduler then still works, reading
// everything each round, and says so once.
const refusedAfter = 3

// watch follows Nomad's event stream from index, feeding the events to
// the rounds and poking the loop. When the stream breaks it reconnects
// from the last index it saw and marks the feed broken, so the next round
// reconciles in full (what Nomad no longer buffers is read back).
func (s *Scheduler) watch(ctx context.Context, f *feed, index uint64) {
	empty, warned := 0, false
	for ctx.Err() == nil {
		ch, err := s.streamEvents(ctx, index)
		if err != nil {
			s.log.Debug("event stream unavailable", "error", err)
			f.push(nil, true)
			sleep(ctx, time.Second)
			continue
		}
		carried := false
		for fr := range ch {
			if fr.err != nil {
				s.log.Debug("event stream broke", "error", fr.err)
				break
			}
			carried = true
			index = max(index, fr.Index)
			f.push(fr.Events, false)
			s.poke()
		}
		if ctx.Err() != nil {
			return
		}
		if carried {
			empty = 0
		} else {
			empty++
		}
		if empty >= refusedAfter && !warned {
			warned = true
			s.log.Warn("Nomad closes the event stream at once (does the token have read-job in the namespace and node read?); reading everything each round instead, which is slower")
		}
		f.push(nil, true)
		s.poke()
		sleep(ctx, 500*time.Millisecond)
	}
}
