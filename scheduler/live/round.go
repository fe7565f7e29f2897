package live

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/prometheus/client_golang/prometheus"
)

// saveEvery bounds how long accrued service may stay unsaved.
const saveEvery = 2 * time.Second

// saveGap is the least time between two state writes. Admissions and
// finishes mark the state dirty, and at scale rounds come several a
// second: writing after each put the whole state (~40 KiB gzipped at
// 1,000 jobs) through Raft back to back, doubling the bytes Nomad's log
// wrote beside the plans and evaluations the admitted jobs wait for
// (scheduler/live/README.md, 1,000 nodes). Nothing is lost by waiting: what
// is admitted is read back from job meta, and a dirty state is written
// by a round poked at the gap's end.
const saveGap = time.Second

// saveRate bounds, on average, the bytes a second that state writes put
// through Nomad's Raft log: every save rewrites the whole encoded state,
// so the least gap between two grows with it (one part, 48 KiB, a
// second). At 10,000 jobs a save is ~9 parts and writes came every
// second: 600 MB of Raft log in a 17-minute run, three times what Nomad
// alone wrote for the same jobs, and 16,000 Variable writes and deletes
// on a server that was the bottleneck (scheduler/live/README.md, two
// cores). Below ~1,000 jobs the gap stays saveGap. What waiting costs: a
// scheduler that crashes loses the service accrued since its last write
// (what it admitted is read back from job meta); one that stops cleanly
// writes a dirty state first (flush).
const saveRate = chunkSize

// saveGapFor is the least time between two state writes when the last
// one encoded size bytes.
func saveGapFor(size int) time.Duration {
	return max(saveGap, time.Duration(size)*time.Second/saveRate)
}

// round is one pass of the pipeline: observe the cluster, classify its
// jobs, then for each class of jobs sharing eligible nodes (class.go)
// snapshot them for the policy, decide and apply the decision (which
// rewrites jobs); last, save state. It returns the Nomad index it read at.
func (s *Scheduler) round() (uint64, error) {
	start := s.now()
	s.calls.Store(0)
	defer func() { observe(s.metrics.roundCalls, float64(s.calls.Load())) }()
	clk := s.clock()
	st := clk.mark
	w, err := s.observeMirror()
	if err != nil {
		return 0, err
	}
	st("observe")
	now := s.now()
	full := s.wantFull()
	var es []*entry
	if full {
		es = s.classifyFull(w, unix(now))
	} else {
		es = s.classifyIncr(unix(now))
	}
	st("classify")
	s.requeueUnplaced(es, now)
	s.countUnplaced(es)
	st("unplaced")
	if full {
		s.progressTargets(es, w.allocs)
	} else {
		s.setProgressTargets(es, w.allocs, s.inc.known, false)
	}
	b := s.held.book(w.nodes, es, now, full)
	var ranking []policy.Rank
	var waits policy.Waits
	lean := s.leanRound(full, len(es), now)
	over := map[string]string{}
	s.waits, s.ranks = s.waits[:0], s.ranks[:0]
	var cs []*class
	if full {
		cs = s.classes(w, es)
	} else {
		cs = s.classesIncr(w, es)
	}
	for _, c := range cs {
		st("classify")
		var snap *policy.Snapshot
		if full {
			snap = s.snapshot(b, c.nodes, c.entries, unix(now))
		} else {
			snap = s.snapshotIncr(b, c, unix(now))
		}
		st("snapshot")
		dec := s.decide(snap, lean)
		st("decide")
		// the decisions' reasons (made a map only for a view) and ranking:
		// they are the policy's storage until its next Decide, so one
		// class's are used as they are and several classes' copied
		if waits, ranking = dec.Waiting, dec.Ranking; len(cs) > 1 {
			s.waits = append(s.waits, dec.Waiting...)
			s.ranks = append(s.ranks, dec.Ranking...)
			waits, ranking = s.waits, s.ranks
		}
		maps.Copy(over, s.apply(w, c.entries, b, dec, now))
		s.markDecided(dec)
		st("apply")
	}
	for _, e := range es {
		if e.phase == phaseQueued && e.unfit != "" {
			s.repair(e)
		}
	}
	s.park(w, es, now)
	st("park")
	if s.viewDue(full, len(es), ranking, now, lean) {
		v := buildView(s.pol.Name(), es, ranking, waitingMap(waits, over), now)
		s.showProgress(v)
		s.view.Store(v)
	}
	st("view")
	err = s.save(now)
	st("save")
	s.metrics.rounds.Inc()
	took := s.now().Sub(start)
	observe(s.metrics.roundSeconds, took.Seconds())
	if took >= slowRound {
		s.log.Info("slow round", "took", took.Round(time.Millisecond), "full", full, "stages", clk,
			"nomad_calls", s.calls.Load(), "admitted", s.admitting, "jobs", len(es))
	}
	s.learnFinished()
	return w.index, err
}

// slowRound is the round duration past which a round logs its stages:
// the scale goal is a round p99 under 1 s, and the histogram alone does
// not say which stage a slow round spent its time in.
const slowRound = time.Second

// roundClock times one round's stages: each mark adds the time since the
// last mark to the stage's total (caravan_scheduler_round_stage_seconds_total)
// and to this round's own, which a slow round logs.
type roundClock struct {
	total *prometheus.CounterVec
	last  time.Time
	names []string
	took  []time.Duration
}

func (s *Scheduler) clock() *roundClock {
	return &roundClock{total: s.metrics.stageSeconds, last: time.Now()}
}

// mark ends the current stage.
func (c *roundClock) mark(stage string) {
	now := time.Now()
	d := now.Sub(c.last)
	c.last = now
	c.total.WithLabelValues(stage).Add(d.Seconds())
	if i := slices.Index(c.names, stage); i >= 0 {
		c.took[i] += d
		return
	}
	c.names = append(c.names, stage)
	c.took = append(c.took, d)
}

// String is the round's stages in the order they first ran.
func (c *roundClock) String() string {
	var b strings.Builder
	for i, n := range c.names {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%s", n, c.took[i].Round(time.Millisecond))
	}
	return b.String()
}

// decide asks the policy once. Its Decision carries the ranking the queue
// view shows, so the ordering (which may keep state) runs exactly as in
// the simulator: once per decision.
func (s *Scheduler) decide(snap *policy.Snapshot, lean bool) policy.Decision {
	snap.MaxStarts = decideStarts // no starts the round would throw away
	snap.SkipReasons = lean
	return s.pol.Decide(snap)
}

// save writes state when something important changed, or periodically.
// The round encodes it; Nomad commits it in the background (saver.go), so
// the next round does not wait for the commits.
func (s *Scheduler) save(now time.Time) error {
	busy, err := s.saver.result()
	if err != nil {
		s.dirty = true // written again by a later round
		return err
	}
	gap := saveGapFor(s.savedBytes)
	if busy || !s.dirty && now.Sub(s.savedAt) < max(saveEvery, gap) {
		return nil // a busy saver: dirty stays set, a later round saves
	}
	if wait := gap - now.Sub(s.savedAt); wait > 0 {
		if !s.savePoked { // one round at the gap's end writes it
			s.savePoked = true
			time.AfterFunc(wait, s.poke)
		}
		return nil
	}
	return s.write(now)
}

// write encodes the state and hands it to the saver.
func (s *Scheduler) write(now time.Time) error {
	s.call("state save")
	payload, err := encodeState(s.st)
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	s.saver.start(func() error { return s.store.savePayload(payload) }, s.poke)
	s.dirty, s.savedAt, s.savePoked, s.savedBytes = false, now, false, len(payload)
	return nil
}

// flush writes a dirty state now, whatever the gap, once the write in
// flight has ended, and waits for it: a scheduler stopping cleanly while
// it still holds the lock loses nothing the gap deferred. A failed write
// in flight is written again here.
func (s *Scheduler) flush() error {
	s.saver.wait()
	if _, err := s.saver.result(); err != nil {
		s.dirty = true
	}
	if !s.dirty || s.st == nil {
		return nil
	}
	if err := s.write(s.now()); err != nil {
		return err
	}
	s.saver.wait()
	_, err := s.saver.result()
	if err != nil {
		s.dirty = true
	}
	return err
}

// waitingMap is why each queued job waits: the decisions' reasons, and
// apply's where a started job did not start after all.
func waitingMap(waits policy.Waits, over map[string]string) map[string]string {
	m := make(map[string]string, len(waits)+len(over))
	for _, w := range waits {
		m[w.JobID] = w.Reason
	}
	maps.Copy(m, over)
	return m
}
