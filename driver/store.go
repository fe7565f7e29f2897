package driver

import "sync"

// taskStore maps task IDs to their handles.
type taskStore struct {
	mu    sync.RWMutex
	tasks map[string]*taskHandle
}

func newTaskStore() *taskStore { return &taskStore{tasks: map[string]*taskHandle{}} }

func (s *taskStore) set(id string, h *taskHandle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tasks[id] = h
}

func (s *taskStore) get(id string) (*taskHandle, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h, ok := s.tasks[id]
	return h, ok
}

func (s *taskStore) delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tasks, id)
}

// all lists the tracked handles.
func (s *taskStore) all() []*taskHandle {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*taskHandle, 0, len(s.tasks))
	for _, h := range s.tasks {
		out = append(out, h)
	}
	return out
}
