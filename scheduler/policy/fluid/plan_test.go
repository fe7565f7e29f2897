package fluid

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy/optimus"
)

func trials(n int, util float64, sp optimus.Speed) []Trial {
	out := make([]Trial, n)
	for i := range out {
		out[i] = Trial{ID: fmt.Sprint("t", i), MemMiB: 1000, Util: util, Speed: sp}
	}
	return out
}

func alloc(p Plan, id string) (Alloc, bool) {
	for _, a := range p.Allocs {
		if a.ID == id {
			return a, true
		}
	}
	return Alloc{}, false
}

// TestPackDepth: 8 trials at utilisation 0.4 on 2 GPUs. Per GPU, depth k
// runs k trials at slowdown max(1, 0.4k)·(1 + 0.05(k−1)): k=2 → 1.05,
// k=3 → 1.32, k=4 → 1.84, so the summed speed is 2, 3.81, 4.55, 4.35:
// depth 3 wins, 6 trials run at 1/3 of a GPU and 2 wait.
func TestPackDepth(t *testing.T) {
	p := PlanGroup(Pool{Count: 2, MemMiB: 16000}, trials(8, 0.4, optimus.Speed{C0: 1}), Config{})
	if len(p.Allocs) != 6 || len(p.Waiting) != 2 || p.Waiting[0] != "t6" {
		t.Fatalf("plan %+v", p)
	}
	for _, a := range p.Allocs {
		if math.Abs(a.Fraction-1.0/3) > 1e-9 || a.Workers != 1 {
			t.Fatalf("alloc %+v", a)
		}
	}
}

// TestPackBoundedByMemory: the same trials at 6 GB on 16 GB GPUs fit only
// two per GPU.
func TestPackBoundedByMemory(t *testing.T) {
	ts := trials(8, 0.4, optimus.Speed{C0: 1})
	for i := range ts {
		ts[i].MemMiB = 6000
	}
	p := PlanGroup(Pool{Count: 2, MemMiB: 16000}, ts, Config{})
	if len(p.Allocs) != 4 || p.Allocs[0].Fraction != 0.5 {
		t.Fatalf("plan %+v", p)
	}
}

// TestNoPackWhenBusy: trials that fill a GPU alone gain nothing packed.
func TestNoPackWhenBusy(t *testing.T) {
	p := PlanGroup(Pool{Count: 2, MemMiB: 16000}, trials(5, 1, optimus.Speed{C0: 1}), Config{})
	if len(p.Allocs) != 2 || p.Allocs[0].Fraction != 1 || len(p.Waiting) != 3 {
		t.Fatalf("plan %+v", p)
	}
}

// TestSpreadStopsWhereScalingStops: T(w) = 1/w + 0.5 gains 33, 17, 10,
// 6.7, then 4.8 % per worker; with MinGain 5 % a trial takes at most 5.
func TestSpreadStopsWhereScalingStops(t *testing.T) {
	sp := optimus.Speed{C0: 1, C1: 0.5}
	p := PlanGroup(Pool{Count: 8, MemMiB: 16000}, trials(2, 1, sp), Config{})
	if a, _ := alloc(p, "t0"); a.Workers != 4 {
		t.Fatalf("two trials on 8 GPUs: %+v", p)
	}
	p = PlanGroup(Pool{Count: 8, MemMiB: 16000}, trials(1, 1, sp), Config{})
	if a, _ := alloc(p, "t0"); a.Workers != 5 || len(a.GPUs) != 5 {
		t.Fatalf("one trial on 8 GPUs: %+v", p)
	}
}

// TestSpreadLevelsRemainingWork: the trial with 3× the remaining work gets
// both spare GPUs (finish 300 → 150 → 100, against 100).
func TestSpreadLevelsRemainingWork(t *testing.T) {
	ts := trials(2, 1, optimus.Speed{C0: 1})
	ts[0].Remaining, ts[1].Remaining = 300, 100
	p := PlanGroup(Pool{Count: 4, MemMiB: 16000}, ts, Config{})
	a, _ := alloc(p, "t0")
	b, _ := alloc(p, "t1")
	if a.Workers != 3 || b.Workers != 1 {
		t.Fatalf("plan %+v", p)
	}
}

func TestBaselines(t *testing.T) {
	ts := trials(5, 0.3, optimus.Speed{C0: 1})
	w := PlanGroup(Pool{Count: 2, MemMiB: 16000}, ts, Config{Mode: WholeGPU})
	if len(w.Allocs) != 2 || w.Allocs[1].GPUs[0] != 1 || len(w.Waiting) != 3 {
		t.Fatalf("whole-gpu %+v", w)
	}
	f := PlanGroup(Pool{Count: 2, MemMiB: 16000}, ts, Config{Mode: FixedFraction, Fraction: 0.5})
	if len(f.Allocs) != 4 || f.Allocs[2].GPUs[0] != 1 || f.Waiting[0] != "t4" {
		t.Fatalf("fixed-fraction %+v", f)
	}
	one := PlanGroup(Pool{Count: 8, MemMiB: 16000}, ts[:1], Config{Mode: WholeGPU})
	if one.Allocs[0].Workers != 1 {
		t.Fatalf("the baseline never spreads: %+v", one)
	}
}

// speedOf is a plan's summed trial speed (1 = one trial alone on a GPU
// with one worker), under the planner's own physics.
func speedOf(p Plan, ts []Trial, cfg Config) float64 {
	cfg = cfg.withDefaults()
	byID := map[string]Trial{}
	for _, t := range ts {
		byID[t.ID] = t
	}
	on := map[int][]float64{}
	for _, a := range p.Allocs {
		if a.Fraction < 1 {
			on[a.GPUs[0]] = append(on[a.GPUs[0]], byID[a.ID].util())
		}
	}
	sum := 0.0
	for _, a := range p.Allocs {
		tr := byID[a.ID]
		s := tr.Speed.StepTime(1) / tr.Speed.StepTime(a.Workers)
		if a.Fraction < 1 {
			s /= cfg.Interference.Factor(on[a.GPUs[0]])
		}
		sum += s
	}
	return sum
}

// TestInvariants: on seeded random groups, no GPU's fractions exceed 1 or
// its memory, whole and shared trials never meet on a GPU, every trial is
// served or waits exactly once, every trial is served when the pack
// depth and memory allow it, and Fluid's summed speed is at least the
// one-trial-per-GPU baseline's.
func TestInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for c := 0; c < 2000; c++ {
		pool := Pool{Count: 1 + r.IntN(8), MemMiB: 16000}
		ts := trials(1+r.IntN(24), 0, optimus.Speed{})
		for i := range ts {
			ts[i].Util = 0.1 + 0.9*r.Float64()
			ts[i].MemMiB = int64(500 + r.IntN(8000))
			ts[i].Speed = optimus.Speed{C0: r.Float64(), C1: r.Float64() * 0.3, C2: r.Float64() * 0.05}
			ts[i].Remaining = float64(1 + r.IntN(1000))
		}
		p := PlanGroup(pool, ts, Config{})
		checkPlan(t, c, pool, ts, p)
		base := PlanGroup(pool, ts, Config{Mode: WholeGPU})
		if f, b := speedOf(p, ts, Config{}), speedOf(base, ts, Config{}); f < b-1e-9 {
			t.Fatalf("case %d: fluid speed %.3f below the baseline's %.3f: %+v", c, f, b, p)
		}
	}
}

func checkPlan(t *testing.T, c int, pool Pool, ts []Trial, p Plan) {
	t.Helper()
	seen := map[string]int{}
	frac := make([]float64, pool.Count)
	mem := make([]int64, pool.Count)
	whole := make([]int, pool.Count)
	mems := map[string]int64{}
	for _, tr := range ts {
		mems[tr.ID] = tr.MemMiB
	}
	for _, a := range p.Allocs {
		seen[a.ID]++
		if a.Workers != len(a.GPUs) || a.Workers < 1 || (a.Fraction < 1 && a.Workers != 1) {
			t.Fatalf("case %d: malformed %+v", c, a)
		}
		for _, g := range a.GPUs {
			if g < 0 || g >= pool.Count {
				t.Fatalf("case %d: GPU %d outside the pool of %d", c, g, pool.Count)
			}
			frac[g] += a.Fraction
			mem[g] += mems[a.ID]
			if a.Fraction == 1 {
				whole[g]++
			}
		}
	}
	for _, id := range p.Waiting {
		seen[id]++
	}
	for g := range frac {
		if frac[g] > 1+1e-9 || mem[g] > pool.MemMiB || (whole[g] > 0 && frac[g] > 1+1e-9) {
			t.Fatalf("case %d: GPU %d over-committed: fraction %.3f, memory %d", c, g, frac[g], mem[g])
		}
	}
	for _, tr := range ts {
		if seen[tr.ID] != 1 {
			t.Fatalf("case %d: trial %s appears %d times", c, tr.ID, seen[tr.ID])
		}
	}
	if len(ts) <= pool.Count && len(p.Waiting) > 0 {
		t.Fatalf("case %d: %d trials on %d GPUs, yet %v wait", c, len(ts), pool.Count, p.Waiting)
	}
}
