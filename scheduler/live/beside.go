package live

// beside runs Nomad calls beside the rounds, one per job: a round starts
// them and takes in the finished ones at its next start, so no round waits
// for a busy server on work no decision of that round needs (parks, the
// evaluations read of an unplaced job). At most `most` are in flight,
// `width` of them talking to Nomad at once.
type beside[T any] struct {
	inflight map[string]bool // the round's goroutine only
	done     chan besideDone[T]
	slots    chan struct{}
}

type besideDone[T any] struct {
	id  string
	out T
}

func newBeside[T any](most, width int) *beside[T] {
	// done holds every call in flight, so a call never waits for a round.
	return &beside[T]{inflight: map[string]bool{}, done: make(chan besideDone[T], most), slots: make(chan struct{}, width)}
}

// room reports whether another call may start.
func (b *beside[T]) room() bool { return len(b.inflight) < cap(b.done) }

// busy reports whether a call for id is in flight.
func (b *beside[T]) busy(id string) bool { return b.inflight[id] }

// start runs f for id on its own goroutine; f must touch nothing of the
// round's.
func (b *beside[T]) start(id string, f func() T) {
	b.inflight[id] = true
	go func() {
		b.slots <- struct{}{}
		out := f()
		<-b.slots
		b.done <- besideDone[T]{id, out}
	}()
}

// take hands every finished call to f; with all, it first waits for
// every call in flight (tests: rounds that do not depend on timing).
func (b *beside[T]) take(all bool, f func(id string, out T)) {
	for {
		var d besideDone[T]
		if all && len(b.inflight) > 0 {
			d = <-b.done
		} else {
			select {
			case d = <-b.done:
			default:
				return
			}
		}
		delete(b.inflight, d.id)
		f(d.id, d.out)
	}
}
