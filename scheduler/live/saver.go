package live

import "sync"

// saver runs one state write at a time in the background. A round hands
// it the encoded state and goes on; the write's error comes back to the
// next round (errStateTaken ends leadership there, as it did when rounds
// wrote state themselves). At scale the save's Raft commits were a third
// of a round's time.
type saver struct {
	mu     sync.Mutex
	busy   bool
	err    error
	flight sync.WaitGroup
}

// start runs write in the background; done is called after a failure.
// The caller checks result first: one write at a time.
func (v *saver) start(write func() error, done func()) {
	v.mu.Lock()
	v.busy = true
	v.mu.Unlock()
	v.flight.Add(1)
	go func() {
		defer v.flight.Done()
		err := write()
		v.mu.Lock()
		v.busy, v.err = false, err
		v.mu.Unlock()
		if err != nil {
			done()
		}
	}()
}

// result says whether a write is in flight, and takes the error of the
// last one that ended.
func (v *saver) result() (busy bool, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	err, v.err = v.err, nil
	return v.busy, err
}

// wait blocks until no write is in flight.
func (v *saver) wait() { v.flight.Wait() }
