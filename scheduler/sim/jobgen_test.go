package sim

import (
	"bytes"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// untracked hides the simulator's Snapshot.JobGen from a policy, keeping
// every interface the engine looks for.
type untracked struct{ p policy.Policy }

func (u untracked) Name() string          { return u.p.Name() }
func (u untracked) Unwrap() policy.Policy { return u.p }
func (u untracked) Decide(s *policy.Snapshot) policy.Decision {
	c := *s
	c.JobGen = nil
	return u.p.Decide(&c)
}
func (u untracked) ObserveFinished(j *policy.Job) {
	if o, ok := u.p.(finishObserver); ok {
		o.ObserveFinished(j)
	}
}
func (u untracked) EventDriven() bool {
	ed, ok := u.p.(EventDriven)
	return ok && ed.EventDriven()
}

// The simulator's JobGen stamps (jobgen.go) are complete: every ordering
// replays a preempting workload to the same bytes with and without them.
func TestJobGenSameReplay(t *testing.T) {
	prof := profiles(t)
	for _, name := range []string{"fifo", "srtf-oracle", "tiresias-las", "tiresias-gittins", "tiresias-las-mlfq", "fair", "lucid", "optimus"} {
		for seed := uint64(1); seed <= 2; seed++ {
			out := func(wrap bool) string {
				p, err := registry.New(name, registry.Config{})
				if err != nil {
					t.Fatal(err)
				}
				if wrap {
					p = untracked{p}
				}
				r, err := Run(Config{RestartPenalty: 5, Check: true}, cluster(t, 4, 4), randomJobs(seed, 120, prof), p)
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				r.WriteJSON(&b)
				r.WriteJobsCSV(&b)
				return b.String()
			}
			if a, b := out(false), out(true); a != b || len(a) < 1000 {
				t.Fatalf("%s seed %d: a replay with JobGen differs from one without (or is empty: %d bytes)", name, seed, len(a))
			}
		}
	}
}
