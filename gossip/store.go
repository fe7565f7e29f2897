package gossip

import (
	"sync"
	"time"
)

// store holds every known record and which members memberlist says are
// alive. A dead member's records stay (hidden from views) so a false
// suspicion that is refuted loses nothing; prune drops them once the
// member has been gone for a while.
type store struct {
	mu        sync.RWMutex
	recs      map[string]*Record
	alive     map[string]bool
	deadSince map[string]time.Time
}

func newStore() *store {
	return &store{recs: map[string]*Record{}, alive: map[string]bool{}, deadSince: map[string]time.Time{}}
}

// merge folds a record in and returns the part that was new (nil when
// nothing changed), ready to be relayed.
func (s *store) merge(in Record) *Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.recs[in.Node]
	if !ok {
		cur = &Record{Node: in.Node}
		s.recs[in.Node] = cur
	}
	changed := cur.merge(in)
	if len(changed) == 0 {
		return nil
	}
	delta := Record{Node: in.Node, Sections: map[string]Section{}}
	for _, name := range changed {
		delta.Sections[name] = cur.Sections[name]
	}
	return &delta
}

func (s *store) setAlive(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.alive[name] = true
	delete(s.deadSince, name)
}

func (s *store) setDead(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.alive, name)
	s.deadSince[name] = time.Now()
}

// prune forgets the records of members dead for longer than after, and
// of members never seen alive that long (stale push-pulls).
func (s *store) prune(now time.Time, after time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.recs {
		if s.alive[name] {
			continue
		}
		since, ok := s.deadSince[name]
		if !ok {
			s.deadSince[name] = now
			continue
		}
		if now.Sub(since) > after {
			delete(s.recs, name)
			delete(s.deadSince, name)
		}
	}
}

// all returns copies of every record (for push-pull).
func (s *store) all() []Record {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Record, 0, len(s.recs))
	for _, r := range s.recs {
		out = append(out, r.clone())
	}
	return out
}

// live returns copies of the records of alive members.
func (s *store) live() []Record {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Record, 0, len(s.recs))
	for name, r := range s.recs {
		if s.alive[name] {
			out = append(out, r.clone())
		}
	}
	return out
}

func (s *store) get(name string) (Record, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.recs[name]
	if !ok {
		return Record{}, false
	}
	return r.clone(), true
}

func (s *store) numAlive() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.alive)
}
