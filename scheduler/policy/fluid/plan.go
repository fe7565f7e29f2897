package fluid

import (
	"math"

	"github.com/caravan-dl/caravan/scheduler/policy/optimus"
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// Mode selects the planner.
type Mode int

const (
	// WaterFill is Fluid: pack within GPUs or spread across them.
	WaterFill Mode = iota
	// WholeGPU is the baseline of Ray Tune and most tuners: one trial per
	// whole GPU, in trial order; the rest wait.
	WholeGPU
	// FixedFraction gives every trial Config.Fraction of one GPU, first
	// fit in trial order, with no water-filling.
	FixedFraction
)

// String names the mode as the CLI and figures do.
func (m Mode) String() string {
	return [...]string{"fluid", "whole-gpu", "fixed-fraction"}[m]
}

// Config tunes the planner; the zero value is Fluid with its defaults.
type Config struct {
	Mode Mode
	// MaxPack caps trials per GPU (default 4).
	MaxPack int
	// MinGain is the least relative speed-up an extra worker or a deeper
	// pack must bring to be taken (default 0.05).
	MinGain float64
	// Interference is the packing slowdown (default Beta 0.05).
	Interference profile.Interference
	// Fraction is FixedFraction's share per trial (default 0.5).
	Fraction float64
	// Profiles gives the utilisation of trials that report none, by model
	// and batch size (default BuiltinProfiles; an empty map: none).
	Profiles Profiles
}

func (c Config) withDefaults() Config {
	if c.MaxPack <= 0 {
		c.MaxPack = 4
	}
	if c.MinGain <= 0 {
		c.MinGain = 0.05
	}
	if c.Interference == (profile.Interference{}) {
		c.Interference = profile.DefaultInterference()
	}
	if !(c.Fraction > 0 && c.Fraction <= 1) {
		c.Fraction = 0.5
	}
	if c.Profiles == nil {
		c.Profiles = BuiltinProfiles()
	}
	return c
}

// Trial is what the planner knows of one trial of a group.
type Trial struct {
	ID     string
	MemMiB int64
	// Util is the trial's busy share of a whole GPU when alone (0..1];
	// 0 means unknown, planned as 1 (no packing gain).
	Util float64
	// Speed is its step time by worker count (Optimus' model), used where
	// Observed has no measurement.
	Speed optimus.Speed
	// Observed holds measured step times by worker count (they win over
	// the model: a worker count that crosses a node boundary can be
	// slower than the smooth fit says).
	Observed map[int]float64
	// Remaining is training left, in steps (0 = unknown, planned as 1).
	Remaining float64
	// MaxWorkers caps its workers (0 = no cap but the pool).
	MaxWorkers int
	// Current is the pool GPUs the trial runs on now (none if queued):
	// plans keep trials where they are when they can, since every move
	// is a restart.
	Current []int
}

// Pool is the GPUs a group may use: Count GPUs of MemMiB each.
type Pool struct {
	Count  int
	MemMiB int64
}

// Alloc is one trial's share: Workers whole GPUs (GPUs lists the pool
// indexes), or, when Fraction < 1, Fraction of the single GPU GPUs[0].
type Alloc struct {
	ID       string
	Workers  int
	Fraction float64
	GPUs     []int
}

// Plan is the planner's answer: allocations in trial order, and the
// trials that wait for a later plan.
type Plan struct {
	Allocs  []Alloc
	Waiting []string
}

// PlanGroup plans one group's trials (in priority order) on a pool.
func PlanGroup(pool Pool, trials []Trial, cfg Config) Plan {
	cfg = cfg.withDefaults()
	if pool.Count <= 0 || len(trials) == 0 {
		return Plan{Waiting: ids(trials)}
	}
	var tooBig []string
	fit := trials[:0:0]
	for _, t := range trials {
		if t.MemMiB > pool.MemMiB {
			tooBig = append(tooBig, t.ID)
		} else {
			fit = append(fit, t)
		}
	}
	p := planFitting(pool, fit, cfg)
	p.Waiting = append(p.Waiting, tooBig...)
	return p
}

func planFitting(pool Pool, trials []Trial, cfg Config) Plan {
	if len(trials) == 0 {
		return Plan{}
	}
	switch cfg.Mode {
	case WholeGPU:
		return whole(pool, trials)
	case FixedFraction:
		return fixed(pool, trials, cfg.Fraction)
	}
	if len(trials) > pool.Count {
		return pack(pool, trials, cfg)
	}
	return spread(pool, trials, cfg)
}

func ids(trials []Trial) []string {
	out := make([]string, 0, len(trials))
	for _, t := range trials {
		out = append(out, t.ID)
	}
	return out
}

// whole runs the first Count trials on one GPU each.
func whole(pool Pool, trials []Trial) Plan {
	w := make([]int, len(trials))
	for i := range w {
		if i < pool.Count {
			w[i] = 1
		}
	}
	return assign(pool, trials, w)
}

// assign gives trial i w[i] whole GPUs (0 = it waits): first the GPUs it
// holds now, then free ones in pool order.
func assign(pool Pool, trials []Trial, w []int) Plan {
	taken := make([]bool, pool.Count)
	gpus := make([][]int, len(trials))
	for i, t := range trials {
		for _, g := range t.Current {
			if len(gpus[i]) < w[i] && g >= 0 && g < pool.Count && !taken[g] {
				taken[g] = true
				gpus[i] = append(gpus[i], g)
			}
		}
	}
	next := 0
	var p Plan
	for i, t := range trials {
		if w[i] == 0 {
			p.Waiting = append(p.Waiting, t.ID)
			continue
		}
		for len(gpus[i]) < w[i] {
			for taken[next] {
				next++
			}
			taken[next] = true
			gpus[i] = append(gpus[i], next)
		}
		p.Allocs = append(p.Allocs, Alloc{ID: t.ID, Workers: w[i], Fraction: 1, GPUs: gpus[i]})
	}
	return p
}

// fixed gives each trial frac of a GPU, first fit in order.
func fixed(pool Pool, trials []Trial, frac float64) Plan {
	var p Plan
	used := make([]float64, pool.Count)
	mem := make([]int64, pool.Count)
	for _, t := range trials {
		g := -1
		for i := range used {
			if used[i]+frac <= 1+1e-9 && mem[i]+t.MemMiB <= pool.MemMiB {
				g = i
				break
			}
		}
		if g < 0 {
			p.Waiting = append(p.Waiting, t.ID)
			continue
		}
		used[g] += frac
		mem[g] += t.MemMiB
		p.Allocs = append(p.Allocs, Alloc{ID: t.ID, Workers: 1, Fraction: frac, GPUs: []int{g}})
	}
	return p
}

// util is the planning utilisation of a trial.
func (t Trial) util() float64 {
	if t.Util <= 0 || math.IsNaN(t.Util) {
		return 1
	}
	return min(t.Util, 1)
}

// stepTime is the measured step time at w workers, else the model's.
func (t Trial) stepTime(w int) float64 {
	if v := t.Observed[w]; v > 0 {
		return v
	}
	return t.Speed.StepTime(w)
}

// remaining is the planning work of a trial.
func (t Trial) remaining() float64 {
	if !(t.Remaining > 0) || math.IsInf(t.Remaining, 0) {
		return 1
	}
	return t.Remaining
}
