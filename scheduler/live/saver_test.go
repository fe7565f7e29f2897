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

// savedOnce is a scheduler on fake Variables that has written its state
// once (at its savedAt), and the count of Variable writes.
func savedOnce(t *testing.T) (*Scheduler, *atomic.Int64) {
	t.Helper()
	f, c := newFakeVars(t)
	puts := &atomic.Int64{}
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
	s.dirty = true
	if err := s.save(time.Now()); err != nil {
		t.Fatal(err)
	}
	s.saver.wait()
	return s, puts
}

// A dirty state is written at most every saveGap; one deferred by the gap
// gets a round (a poke) at the gap's end, so it is not left unsaved.
func TestDirtyStateWaitsForTheSaveGap(t *testing.T) {
	s, puts := savedOnce(t)
	now := s.savedAt
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

// The least gap between two writes grows with the encoded state (one
// 48 KiB part a second), so a big queue's saves do not fill Nomad's Raft
// log; a small state keeps saveGap.
func TestSaveGapGrowsWithTheState(t *testing.T) {
	if g := saveGapFor(0); g != saveGap {
		t.Fatalf("empty state: gap %s, want %s", g, saveGap)
	}
	if g := saveGapFor(chunkSize / 2); g != saveGap {
		t.Fatalf("half a part: gap %s, want %s", g, saveGap)
	}
	if g := saveGapFor(9 * chunkSize); g != 9*time.Second {
		t.Fatalf("nine parts: gap %s, want 9s", g)
	}
	s, puts := savedOnce(t)
	now := s.savedAt
	s.savedBytes = 5 * chunkSize // as if the state had grown to five parts
	written := puts.Load()
	for _, after := range []time.Duration{saveEvery, 4 * time.Second} {
		s.dirty = true
		if err := s.save(now.Add(after)); err != nil {
			t.Fatal(err)
		}
		s.saver.wait()
		if puts.Load() != written {
			t.Fatalf("a five-part state was written again %s after the last write (gap %s)", after, saveGapFor(s.savedBytes))
		}
	}
	if err := s.save(now.Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	s.saver.wait()
	if puts.Load() == written || s.dirty {
		t.Fatalf("the deferred state was not written at the gap's end (dirty %v)", s.dirty)
	}
	if s.savedBytes >= chunkSize {
		t.Fatalf("savedBytes %d: not the last write's size", s.savedBytes)
	}
}

// flush writes a dirty state at once, whatever the gap, after the write
// in flight; a clean stop calls it before the lock is released.
func TestFlushWritesWhatTheGapDeferred(t *testing.T) {
	_, c := newFakeVars(t)
	s, err := New(Config{Token: "t"}, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.st, err = s.store.load(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	s.st.job("a", 100, 7).Attained = 1
	s.dirty = true
	if err := s.save(now); err != nil {
		t.Fatal(err)
	}
	s.savedBytes = 20 * chunkSize
	s.st.Jobs["a"].Attained = 42 // service accrued since: deferred by the gap
	s.dirty = true
	if err := s.save(now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	if s.dirty {
		t.Fatal("still dirty after flush")
	}
	st, err := newStore(c, s.cfg.StatePath, s.cfg.Namespace, nil).load()
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Jobs["a"]; r == nil || r.Attained != 42 {
		t.Fatalf("stored record %+v, want attained 42", r)
	}
	if err := s.flush(); err != nil { // nothing dirty: no write
		t.Fatal(err)
	}
}
