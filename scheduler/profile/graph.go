package profile

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
)

// ModelGraph is what a model's computation graph says about its cost per
// sample, computed from the model definition alone (no weights, no run on
// a GPU) by workloads/model_features.py: the features Horus predicts
// utilisation and interference from.
type ModelGraph struct {
	ParamsM    float64 `json:"params_m"`    // parameters, millions
	GFLOPs     float64 `json:"gflops"`      // forward FLOPs per sample, billions
	ActMB      float64 `json:"act_mb"`      // output activations per sample, MiB
	ConvFrac   float64 `json:"conv_frac"`   // share of FLOPs in convolutions
	MatmulFrac float64 `json:"matmul_frac"` // share in dense layers and attention
	RNNFrac    float64 `json:"rnn_frac"`    // share in recurrent cells
	Layers     int     `json:"layers"`      // compute layers
}

//go:embed gavel_features.json
var gavelFeaturesJSON []byte

// GavelGraphs are the graph features of Gavel's seven models, keyed by
// Gavel's model names ("ResNet-18", "LM", ...), as computed by
// `/usr/bin/python3 workloads/model_features.py` (regenerate the embedded
// gavel_features.json with it when the script changes).
func GavelGraphs() (map[string]ModelGraph, error) {
	return ParseGraphs(gavelFeaturesJSON)
}

// ParseGraphs decodes the script's JSON output, checking every field.
func ParseGraphs(b []byte) (map[string]ModelGraph, error) {
	var out map[string]ModelGraph
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("model graph features: %w", err)
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		g := out[n]
		if !(g.ParamsM > 0) || !(g.GFLOPs > 0) || !(g.ActMB >= 0) || g.Layers < 1 {
			return nil, fmt.Errorf("model graph features: %q: params_m, gflops and layers must be positive", n)
		}
		if s := g.ConvFrac + g.MatmulFrac + g.RNNFrac; s < 0.99 || s > 1.01 {
			return nil, fmt.Errorf("model graph features: %q: conv_frac+matmul_frac+rnn_frac = %.3f, want 1", n, s)
		}
	}
	return out, nil
}
