package registry

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
	pt "github.com/caravan-dl/caravan/scheduler/policy/policytest"
)

// hashPairs gives every ordered pair of models a fixed slowdown in
// [1, 2.2) from a hash; a few pairs cannot share at all.
type hashPairs struct{}

func (hashPairs) Slowdown(a, b *policy.Job) (float64, bool) {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s|%s", a.Model, b.Model)
	v := h.Sum32()
	if v%11 == 0 {
		return 0, false
	}
	return 1 + float64(v%1200)/1000, true
}

func (hashPairs) Class(j *policy.Job) uint32 {
	h := fnv.New32a()
	h.Write([]byte(j.Model))
	return h.Sum32()
}

// TestBoundedInvariantOnRandomRuns: under every ordering with the
// interference-bounded placement, over 25 random snapshots and four
// rounds each (decide, apply, advance), the usual invariants hold and no
// job the policy started shares a GPU with a job either of whose
// predicted slowdowns exceeds the bound. Jobs placed by the random
// generator itself may break it; only the policy's own starts count.
func TestBoundedInvariantOnRandomRuns(t *testing.T) {
	const bound = 1.5
	cfg := Config{GittinsPrior: []float64{100, 900, 3000, 20000, 80000}}
	cfg.Interference.Pairs, cfg.Interference.SlowdownBound = hashPairs{}, bound
	sp := smallSpec()
	sp.FracShare = 0.8
	shared := 0
	for _, o := range Orderings() {
		name := o + "+interference-bounded"
		for seed := uint64(1); seed <= 25; seed++ {
			p, err := New(name, cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := pt.Random(seed, sp)
			started := map[string]bool{}
			for round := 0; round < 4; round++ {
				d := p.Decide(pt.Clone(s))
				if err := pt.Check(s, d); err != nil {
					t.Fatalf("%s seed %d round %d: %v", name, seed, round, err)
				}
				for _, st := range d.Starts {
					started[st.JobID] = true
				}
				s = pt.Apply(s, d)
				s.Now += 500
				n, err := boundHolds(s, started, bound)
				if err != nil {
					t.Fatalf("%s seed %d round %d: %v", name, seed, round, err)
				}
				shared += n
			}
		}
	}
	if shared == 0 {
		t.Fatal("vacuous: the policy never co-located a job")
	}
}

// boundHolds checks every GPU shared by a job in started, returning how
// many such sharings it saw.
func boundHolds(s *policy.Snapshot, started map[string]bool, bound float64) (int, error) {
	on := map[string][]*policy.Job{}
	for _, j := range s.Jobs {
		if j.State != policy.Running {
			continue
		}
		seen := map[string]bool{}
		for _, sl := range j.Placement.Slots {
			k := fmt.Sprintf("%s/%d", sl.Node, sl.GPU)
			if !seen[k] {
				seen[k] = true
				on[k] = append(on[k], j)
			}
		}
	}
	n := 0
	for gpu, js := range on {
		for _, a := range js {
			if !started[a.ID] {
				continue
			}
			for _, b := range js {
				if a == b {
					continue
				}
				n++
				sa, oka := hashPairs{}.Slowdown(a, b)
				sb, okb := hashPairs{}.Slowdown(b, a)
				if !oka || !okb || sa > bound || sb > bound {
					return n, fmt.Errorf("%s: started %s shares with %s at %.2f×/%.2f× (ok %v %v), bound %.2f", gpu, a.ID, b.ID, sa, sb, oka, okb, bound)
				}
			}
		}
	}
	return n, nil
}

func TestBoundedNeedsPredictor(t *testing.T) {
	if _, err := New("fifo+interference-bounded", Config{}); err == nil {
		t.Fatal("interference-bounded without a predictor must fail")
	}
	for _, n := range Names() {
		for _, x := range ExtraPlacements() {
			if n == "fifo+"+x {
				t.Fatalf("%s is listed: golden digests would need it", n)
			}
		}
	}
}
