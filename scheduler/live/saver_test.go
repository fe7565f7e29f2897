package live

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// A round hands the state write to the background and goes on; one write
// is in flight at a time, and its failure reaches the next round.
func TestStateIsSavedInTheBackground(t *testing.T) {
	f, c := newFakeVars(t)
	release := make(chan struct{})
	var puts atomic.Int64
	fail := atomic.Bool{}
	f.before = func(method, path string) error {
		if method != http.MethodPut {
			return nil
		}
		puts.Add(1)
		<-release
		if fail.Load() {
			return errors.New("raft: leadership lost")
		}
		return nil
	}
	s, err := New(Config{Token: "t"}, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	s.dirty = true
	if err := s.save(now); err != nil { // returns with the write blocked in Nomad
		t.Fatal(err)
	}
	s.dirty = true
	if err := s.save(now); err != nil {
		t.Fatal(err)
	}
	release <- struct{}{}
	s.saver.wait()
	if puts.Load() != 1 || !s.dirty {
		t.Fatalf("%d writes while one was in flight (want 1), dirty %v (want kept for later)", puts.Load(), s.dirty)
	}
	fail.Store(true)
	if err := s.save(now); err != nil {
		t.Fatal(err)
	}
	release <- struct{}{}
	s.saver.wait()
	if err := s.save(now); err == nil || !s.dirty {
		t.Fatalf("the failed write did not reach the next round: %v, dirty %v", err, s.dirty)
	}
	// Another writer took the state: the next round ends leadership.
	fail.Store(false)
	close(release)
	other := newStore(c, s.cfg.StatePath, s.cfg.Namespace, nil)
	if _, err := other.load(); err != nil {
		t.Fatal(err)
	}
	if err := other.save(newState()); err != nil {
		t.Fatal(err)
	}
	if err := s.save(now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	s.saver.wait()
	if err := s.save(now.Add(2 * time.Minute)); !errors.Is(err, errStateTaken) {
		t.Fatalf("after another writer: %v, want errStateTaken", err)
	}
}
