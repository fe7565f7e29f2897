package colocate

import (
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// PooledSamples are the single-GPU pairs of several GPU types together,
// each job marked with its GPU type (for FitOptions.PoolGPUs).
func PooledSamples(g *profile.Gavel, gpus []string, graphs map[string]profile.ModelGraph) []Sample {
	var out []Sample
	for _, gpu := range gpus {
		s, _ := GavelSamples(g, gpu, graphs)
		for _, x := range s {
			x.Job.GPU, x.Partner.GPU = gpu, gpu
			out = append(out, x)
		}
	}
	return out
}

// NewHeldOutPooled is HeldOut on pooled samples: each pair of models is
// predicted by a fit that saw neither model on any GPU type, but learned
// from the other models' pairs on every type.
func NewHeldOutPooled(pooled []Sample, opt FitOptions) (*HeldOut, error) {
	opt.PoolGPUs = true
	return newHeldOut(pooled, opt, func(j Job) string { return j.Model })
}

// NewSeenElsewhere is a different deployment case, not held out: each
// pair of models on gpu is predicted by a fit that saw neither model's
// pairs on gpu, but did see both models' pairs on the other GPU types (a
// model the cluster has run on other hardware).
func NewSeenElsewhere(pooled []Sample, gpu string, opt FitOptions) (*HeldOut, error) {
	opt.PoolGPUs = true
	return newHeldOutDropping(pooled, opt, func(j Job) string { return j.Model },
		func(s Sample) bool { return s.Job.GPU == gpu })
}

// PooledErrors are a pooled fit's held-out errors on one GPU type.
type PooledErrors struct {
	GPU string
	// HeldOut: each model's pairs on GPU predicted by a fit that saw the
	// model on no GPU type. SeenElsewhere: by a fit that saw its pairs on
	// the other types only (not the strict held-out case).
	HeldOut, SeenElsewhere Errors
}

// EvaluatePooled holds out each model in turn from a fit pooled over the
// GPU types, and reports its error per type, both ways.
func EvaluatePooled(pooled []Sample, gpus []string, bound float64) []PooledErrors {
	opt := FitOptions{PoolGPUs: true}
	strict := map[string][][2]float64{}
	seen := map[string][][2]float64{}
	for _, m := range modelsOf(pooled) {
		train, test := split(pooled, m)
		p, err := FitCVWith(train, opt)
		if err != nil {
			continue
		}
		for _, s := range test {
			strict[s.Job.GPU] = append(strict[s.Job.GPU], [2]float64{p.Slowdown(s.Job, s.Partner), s.Slowdown})
		}
		for _, gpu := range gpus {
			var tr []Sample
			for _, s := range pooled {
				if s.Job.GPU != gpu || !involves(s, m) {
					tr = append(tr, s)
				}
			}
			q, err := FitCVWith(tr, opt)
			if err != nil {
				continue
			}
			for _, s := range test {
				if s.Job.GPU == gpu {
					seen[gpu] = append(seen[gpu], [2]float64{q.Slowdown(s.Job, s.Partner), s.Slowdown})
				}
			}
		}
	}
	out := make([]PooledErrors, 0, len(gpus))
	for _, gpu := range gpus {
		out = append(out, PooledErrors{GPU: gpu, HeldOut: summarise(strict[gpu], bound), SeenElsewhere: summarise(seen[gpu], bound)})
	}
	return out
}
