package live

import (
	"testing"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// learner is a policy that records what it learns and when it prepares.
type learner struct {
	policy.Policy
	fed      []string
	prepares int
}

func (l *learner) ObserveFinished(j *policy.Job) { l.fed = append(l.fed, j.ID) }
func (l *learner) Prepare()                      { l.prepares++ }

// After a round the policy is fed each finished job once, and prepares
// once if it was fed anything: a full round's new entries for the same
// records feed nothing again, a record made afresh (the job aged out and
// came back, or ran again) feeds it again.
func TestLearnFinishedOncePerRecord(t *testing.T) {
	s := testScheduler(t)
	l := &learner{Policy: s.pol}
	s.pol = l
	rec := map[string]*record{"a": {Submit: 1, FinishedAt: 9}, "b": {Submit: 2, FinishedAt: 9}}
	done := func(ids ...string) []*entry {
		var es []*entry
		for _, id := range ids {
			es = append(es, &entry{stub: &jobStub{ID: id}, rec: rec[id], phase: phaseDone})
		}
		return es
	}
	s.finished = done("a", "b")
	s.learnFinished()
	if len(l.fed) != 2 || l.prepares != 1 {
		t.Fatalf("first round fed %v and prepared %d times, want a and b, once", l.fed, l.prepares)
	}
	s.finished = done("a", "b") // a full round: new entries, same records
	s.learnFinished()
	if len(l.fed) != 2 || l.prepares != 1 {
		t.Fatalf("a later round fed %v and prepared %d times: nothing is new", l.fed, l.prepares)
	}
	rec["a"] = &record{Submit: 1, FinishedAt: 9} // forgotten and classified afresh
	s.finished = done("a", "b")
	s.learnFinished()
	if len(l.fed) != 3 || l.fed[2] != "a" || l.prepares != 2 {
		t.Fatalf("a record made afresh fed %v, prepared %d times; want a again", l.fed, l.prepares)
	}
	if len(s.finished) != 0 {
		t.Fatal("the round's finished jobs were kept after they were learnt")
	}
}

// idler is a policy that counts its Idle calls (policy.Idler).
type idler struct {
	policy.Policy
	idles int
}

func (i *idler) Idle() { i.idles++; time.Sleep(time.Millisecond) }

// Between rounds the loop lets the policy ready its memory (the
// Framework faults in its next giant's slots) and times it as the idle
// stage; a policy without Idle is left alone.
func TestIdleBetweenRounds(t *testing.T) {
	s := testScheduler(t)
	s.collectBetweenRounds() // the registry's Framework: an Idler
	p := &idler{Policy: s.pol}
	s.pol = p
	s.collectBetweenRounds()
	s.collectBetweenRounds()
	if p.idles != 2 {
		t.Fatalf("%d Idle calls after two rounds, want 2", p.idles)
	}
	if secs := counterValue(s.metrics.stageSeconds.WithLabelValues("idle")); secs < 0.002 {
		t.Fatalf("idle stage %v s after two Idle calls of a millisecond or more", secs)
	}
	s.pol = &learner{Policy: nil} // no Idle: nothing to call
	s.collectBetweenRounds()
}
