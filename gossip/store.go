package gossip

import (
	"sync"
)

// store holds every known record and which members memberlist says are
// alive. Records of members that died are dropped and tombstoned until
// the member joins again, so a late push-pull cannot bring them back.
type store struct {
	mu    sync.RWMutex
	recs  map[string]*Record
	alive map[string]bool
	tomb  map[string]bool
}

func newStore() *store {
	return &store{recs: map[string]*Record{}, alive: map[string]bool{}, tomb: map[string]bool{}}
}

// merge folds a record in and returns the part that was new (nil when
// nothing changed), ready to be relayed.
func (s *store) merge(in Record) *Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tomb[in.Node] {
		return nil
	}
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
	delete(s.tomb, name)
}

func (s *store) setDead(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.alive, name)
	delete(s.recs, name)
	s.tomb[name] = true
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
