package profile

// Interference models co-located jobs sharing one GPU (MPS or time
// slicing). For the k jobs on a GPU with utilisation demands d_i (each
// job's busy fraction of a whole GPU, capped at 1), every one of them runs
// slower by
//
//	factor = max(1, Σ d_i) · (1 + Beta·(k−1))   for k ≥ 2, else 1.
//
// The first term is the overload: when demands add up to more than the GPU
// can give, each job gets a proportional share, so step time stretches by
// the overload ratio (the same fair-share assumption Gandiva and Salus make
// for time-sliced GPUs). The second is a fixed cost per co-runner for
// context switches and cache and memory-bandwidth contention that MPS
// compute caps do not isolate; Beta defaults to 0.05, an assumption at the
// low end of the 5–20% packing slowdowns Gandiva (OSDI'18) and Horus
// report for well-matched pairs.
type Interference struct {
	Beta float64
}

// DefaultInterference is the model with Beta = 0.05.
func DefaultInterference() Interference { return Interference{Beta: 0.05} }

// Factor is the slowdown (≥ 1) for jobs on a GPU with these demands.
func (in Interference) Factor(demands []float64) float64 {
	if len(demands) < 2 {
		return 1
	}
	sum := 0.0
	for _, d := range demands {
		sum += min(max(d, 0), 1)
	}
	return max(1, sum) * (1 + in.Beta*float64(len(demands)-1))
}
