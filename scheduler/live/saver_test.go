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
	now = now.Add(saveGap) // writes are at least saveGap apart
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

// A dirty state is written at most every saveGap; one deferred by the gap
// gets a round (a poke) at the gap's end, so it is not left unsaved.
func TestDirtyStateWaitsForTheSaveGap(t *testing.T) {
	f, c := newFakeVars(t)
	var puts atomic.Int64
	f.before = func(method, path string) error {
		if method == http.MethodPut {
			puts.Add(1)
		}
		return nil
	}
	s, err := New(Config{Token: "t"}, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	s.dirty = true
	if err := s.save(now); err != nil {
		t.Fatal(err)
	}
	s.saver.wait()
	written := puts.Load()
	s.dirty = true
	if err := s.save(now.Add(saveGap / 2)); err != nil {
		t.Fatal(err)
	}
	s.saver.wait()
	if puts.Load() != written || !s.dirty {
		t.Fatalf("a dirty state was written %s after the last write (gap %s), dirty %v", saveGap/2, saveGap, s.dirty)
	}
	select {
	case <-s.wake:
	case <-time.After(10 * saveGap):
		t.Fatal("no round was poked to write the deferred state")
	}
	if err := s.save(now.Add(saveGap)); err != nil {
		t.Fatal(err)
	}
	s.saver.wait()
	if puts.Load() == written || s.dirty {
		t.Fatalf("the deferred state was not written at the gap's end (dirty %v)", s.dirty)
	}
}
