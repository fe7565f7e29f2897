package live

import (
	"time"
)

// The periodic reconcile (Config.ReconcileEvery) is the safety net under
// the event stream, not something a round needs: the mirror is current.
// At 1,000 nodes × 10,000 jobs its lists (every job with meta, every
// allocation) are tens of megabytes, and a round that read them inline
// took seconds, once a minute: the slowest rounds of the run. So the
// periodic read runs beside the rounds. They go on with the mirror and
// the event stream, keeping the events they apply; the round that finds
// the read done builds the new mirror from the lists, applies the kept
// events to it (those already in the lists are ignored: mirror.newer)
// and swaps it in. A reconcile the round cannot do without (no mirror
// yet, a broken stream, an unreadable event, events lagging behind our
// own writes) still reads inside the round and drops a read in flight.

// besideRead is a periodic full read in flight.
type besideRead struct {
	began  time.Time
	done   chan struct{}
	lists  *lists // set, with err, before done closes
	err    error
	replay []event // events applied to the mirror since the read began
}

// reconcileBeside starts the periodic read when due and swaps in its
// mirror once it is done.
func (s *Scheduler) reconcileBeside() {
	if s.bg == nil {
		if s.now().Sub(s.reconciledAt) < s.cfg.ReconcileEvery {
			return
		}
		s.startBeside()
	}
	if s.waitBeside {
		<-s.bg.done
	}
	select {
	case <-s.bg.done:
	default:
		return
	}
	bg := s.bg
	s.bg = nil
	if bg.err != nil {
		s.log.Warn("periodic full read failed; reading in the next round", "error", bg.err)
		s.needFull = true
		return
	}
	m, err := s.buildMirror(bg.lists)
	if err != nil {
		s.log.Warn("periodic full read failed; reading in the next round", "error", err)
		s.needFull = true
		return
	}
	for i := range bg.replay {
		// Each was applied to the old mirror without error.
		_, _ = s.applyEvent(m, &bg.replay[i])
	}
	s.setMirror(m, bg.began)
}

// startBeside starts reading the lists; the round after it ends is poked.
func (s *Scheduler) startBeside() {
	bg := &besideRead{began: s.now(), done: make(chan struct{})}
	s.bg = bg
	go func() {
		defer close(bg.done)
		bg.lists, bg.err = s.readLists()
		s.poke()
	}()
}

// keepForReplay keeps events applied while a periodic read is in flight.
func (s *Scheduler) keepForReplay(evs []event) {
	if s.bg != nil {
		s.bg.replay = append(s.bg.replay, evs...)
	}
}

// setMirror makes m the mirror, as read at at.
func (s *Scheduler) setMirror(m *mirror, at time.Time) {
	s.mirror, s.reconciledAt, s.needFull = m, at, false
	s.poolsChecked = at
}
