package sim

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
	"github.com/caravan-dl/caravan/scheduler/policy/registry"
)

// TestRegistryPoliciesKeepInvariants runs every policy the CLI offers
// (each ordering with each placement) on randomized workloads of whole,
// fractional and elastic gangs with the simulator's invariant checks on
// every event: no GPU over its fraction or memory, gangs all-or-nothing,
// attained service never decreasing. Every job must finish or be reported
// exactly once, and the same seed must give the same bytes.
func TestRegistryPoliciesKeepInvariants(t *testing.T) {
	prof := profiles(t)
	for _, name := range registry.Names() {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 2; seed++ {
				jobs := randomJobs(seed, 80, prof)
				first := runRegistry(t, name, jobs)
				checkEachJobOnce(t, first, jobs)
				if again := runRegistry(t, name, jobs); !bytes.Equal(resultJSON(t, first), resultJSON(t, again)) {
					t.Fatalf("seed %d: same seed, different results", seed)
				}
			}
		})
	}
}

func runRegistry(t *testing.T, name string, jobs []Job) *Result {
	t.Helper()
	p, err := registry.New(name, registry.Config{Queues: order.QueueConfig{PromoteKnob: 2}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(Config{Check: true, Quantum: 60, RestartPenalty: 5}, cluster(t, 4, 4), jobs, p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func checkEachJobOnce(t *testing.T, r *Result, jobs []Job) {
	t.Helper()
	seen := map[string]int{}
	for _, j := range r.Jobs {
		seen[j.ID]++
		if j.Start < j.Submit || j.Finish < j.Start {
			t.Fatalf("job %s: submit %v, start %v, finish %v out of order", j.ID, j.Submit, j.Start, j.Finish)
		}
	}
	for _, u := range r.Unfit {
		seen[u.ID]++
	}
	for _, j := range jobs {
		if seen[j.ID] != 1 {
			t.Fatalf("job %s finished or was reported %d times", j.ID, seen[j.ID])
		}
	}
	if len(r.Jobs) == 0 {
		t.Fatal("no job finished")
	}
}

func resultJSON(t *testing.T, r *Result) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestPromoteKnobBoundsWaiting checks Tiresias' starvation rule on every
// decision: a queued job below the top queue has waited less than
// PromoteKnob × its executed time (else it must have been promoted). The
// workloads are a long job starved by a stream of short ones that keeps
// the only GPU busy (which, without the knob, waits 4,800 s) and random
// mixes, under 2D-LAS and 2D-Gittins.
func TestPromoteKnobBoundsWaiting(t *testing.T) {
	starve := []Job{job("long", 0, 3000, 1)}
	for i := 0; i < 96; i++ {
		starve = append(starve, job(fmt.Sprintf("s%02d", i), 200+50*float64(i), 50, 1))
	}
	qc := func(k float64) order.QueueConfig {
		return order.QueueConfig{Queues: 2, Limits: []float64{100}, PromoteKnob: k}
	}
	orderers := map[string]func(order.QueueConfig) (policy.Orderer, error){
		"las": func(c order.QueueConfig) (policy.Orderer, error) { return order.NewLAS(c) },
		"gittins": func(c order.QueueConfig) (policy.Orderer, error) {
			return order.NewGittins(order.GittinsConfig{QueueConfig: c, Prior: []float64{50, 100, 3000}})
		},
	}
	run := func(name string, k float64, jobs []Job, c policy.Cluster) *knobSpy {
		o, err := orderers[name](qc(k))
		if err != nil {
			t.Fatal(err)
		}
		spy := &knobSpy{Framework: policy.NewFramework(o, place.NewConsolidated()), knob: k, watch: "long"}
		if _, err := Run(Config{Check: true, Quantum: 10}, c, jobs, spy); err != nil {
			t.Fatal(err)
		}
		return spy
	}
	for name := range orderers {
		starved := run(name, 0, starve, cluster(t, 1, 1)).maxWait
		if starved < 4000 {
			t.Fatalf("%s: without the knob the long job should wait for the stream, waited at most %.0f s", name, starved)
		}
		for _, k := range []float64{0.5, 1, 2} {
			spy := run(name, k, starve, cluster(t, 1, 1))
			if spy.bad != "" {
				t.Fatalf("%s, knob %g: %s", name, k, spy.bad)
			}
			if spy.maxWait >= starved/2 {
				t.Errorf("%s, knob %g: long job still waited %.0f s (%.0f s without the knob)", name, k, spy.maxWait, starved)
			}
			t.Logf("%s, knob %g: long job's longest wait %.0f s, without the knob %.0f s", name, k, spy.maxWait, starved)
			for seed := uint64(1); seed <= 3; seed++ {
				if bad := run(name, k, randomJobs(seed, 80, profiles(t)), cluster(t, 2, 4)).bad; bad != "" {
					t.Fatalf("%s, knob %g, seed %d: %s", name, k, seed, bad)
				}
			}
		}
	}
}

// knobSpy decides with its framework, then ranks the same snapshot again
// (ranking at one instant is idempotent) to check the starvation rule,
// and records the longest wait of one job after it first ran.
type knobSpy struct {
	*policy.Framework
	knob    float64
	watch   string
	maxWait float64
	bad     string
}

func (k *knobSpy) Decide(s *policy.Snapshot) policy.Decision {
	d := k.Framework.Decide(s)
	for _, r := range k.Order.Order(s) {
		j := r.Job
		if j.State != policy.Queued || j.Executed <= 0 {
			continue
		}
		waited := s.Now - max(j.QueuedSince, j.Submit)
		if j.ID == k.watch {
			k.maxWait = max(k.maxWait, waited)
		}
		// ran since its last promotion ≤ Executed, so this wait is past
		// the knob whatever the promotion history
		if k.knob > 0 && r.Queue > 0 && waited >= k.knob*j.Executed && k.bad == "" {
			k.bad = fmt.Sprintf("t=%.0f: job %s waited %.0f s in queue %d after running %.0f s", s.Now, j.ID, waited, r.Queue, j.Executed)
		}
	}
	return d
}
