package colocate

import (
	"github.com/caravan-dl/caravan/scheduler/profile"
)

// GavelSamples are a GPU type's measured single-GPU pairs that ran
// together, as samples (each pair gives one sample per side), in a stable
// order. Types whose model has no graph features are skipped and counted.
func GavelSamples(g *profile.Gavel, gpu string, graphs map[string]profile.ModelGraph) (samples []Sample, skipped int) {
	types := g.Types(gpu)
	for _, a := range types {
		for _, b := range types {
			if a.Scale != 1 || b.Scale != 1 {
				continue
			}
			sa, _, ok := g.Slowdowns(gpu, a, b)
			if !ok {
				continue
			}
			ja, erra := GavelJob(a, graphs)
			jb, errb := GavelJob(b, graphs)
			if erra != nil || errb != nil {
				skipped++
				continue
			}
			samples = append(samples, Sample{Job: ja, Partner: jb, Slowdown: sa})
		}
	}
	return samples, skipped
}
