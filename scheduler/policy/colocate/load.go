package colocate

import (
	"fmt"

	"github.com/caravan-dl/caravan/scheduler/profile"
)

// LoadPairs is what a live scheduler configures the interference-bounded
// placement with: Gavel's measurements at path (simulation_throughputs.json)
// for one GPU type, and the rule (Predicted: FitPairs with opt, fitted on
// every measured pair; Oracle: the measured slowdowns; Naive; Exclusive).
// Errors name the file, an unknown GPU type or rule.
func LoadPairs(path, gpu string, rule Rule, opt FitOptions) (*PlacementPairs, error) {
	g, err := profile.LoadGavel(path)
	if err != nil {
		return nil, err
	}
	if g.GPUs[gpu] == nil {
		return nil, fmt.Errorf("colocate: %s has no GPU type %q", path, gpu)
	}
	graphs, err := profile.GavelGraphs()
	if err != nil {
		return nil, err
	}
	switch rule {
	case Predicted:
		return FitPairsWith(g, gpu, graphs, opt)
	case Oracle, Naive, Exclusive:
		return &PlacementPairs{Rule: rule, Gavel: g, GPU: gpu, Graphs: graphs}, nil
	}
	return nil, fmt.Errorf("colocate: rule %q: want predicted, oracle, naive or exclusive", rule)
}
