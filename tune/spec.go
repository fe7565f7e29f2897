package tune

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsimple"
)

// Algorithm names accepted in a spec.
const (
	AlgRandom    = "random"
	AlgGrid      = "grid"
	AlgSHA       = "sha" // synchronous successive halving
	AlgASHA      = "asha"
	AlgHyperband = "hyperband"
)

// Algorithms lists the valid algorithm names.
var Algorithms = []string{AlgRandom, AlgGrid, AlgSHA, AlgASHA, AlgHyperband, AlgBOHB}

// Parameter types of a search space.
const (
	ParamChoice     = "choice"
	ParamUniform    = "uniform"
	ParamLogUniform = "log_uniform"
	ParamInt        = "int"
)

// Spec is one tuning job, as written in HCL:
//
//	tune "digits" {
//	  job       = "tune-digits"   # parameterized Nomad job to dispatch
//	  metric    = "loss"          # key in the trial's progress lines
//	  mode      = "min"           # or "max"
//	  algorithm = "asha"          # random, grid, sha, asha, hyperband
//	  trials    = 9
//	  seed      = 1
//	  budget { unit = "steps"  min = 50  max = 450  reduction = 3  total = 0 }
//	  param "lr"    { type = "log_uniform"  min = 0.001  max = 0.5 }
//	  param "batch" { type = "choice"  values = [16, 32, 64] }
//	}
type Spec struct {
	Name      string `hcl:"name,label"`
	Job       string `hcl:"job,optional"`
	Metric    string `hcl:"metric"`
	Mode      string `hcl:"mode,optional"`
	Algorithm string `hcl:"algorithm"`
	// Trials is how many configurations to try (random, sha, asha);
	// grid takes the grid's size, hyperband its brackets'.
	Trials int `hcl:"trials,optional"`
	// Parallel bounds ASHA's running trials (default: Trials).
	Parallel int `hcl:"parallel,optional"`
	// Sampler draws configurations: "random" (default) or "grid", which
	// walks the grid in order (sha, asha, random over a grid; trials
	// defaults to the grid's size).
	Sampler string `hcl:"sampler,optional"`
	Seed    int64  `hcl:"seed,optional"`
	Budget  Budget `hcl:"budget,block"`
	// Task is the task whose progress file holds the metric (default
	// "trial").
	Task string `hcl:"task,optional"`
	// Meta is fixed dispatch meta sent with every trial.
	Meta map[string]string `hcl:"meta,optional"`
	// Checkpoint is a directory every trial can write (shared storage,
	// such as a Nomad host volume or NFS mount, at the same path in each
	// trial). With it, a promoted trial resumes from its previous rung:
	// each run gets meta "checkpoint" (its trial's file there) and
	// "resume_steps" (the budget that file holds; 0 on a first rung).
	// Without it, a promoted trial trains from scratch.
	Checkpoint string `hcl:"checkpoint,optional"`
	// BatchParam names the param that is the trial's per-GPU batch size:
	// each trial then also gets it as meta caravan.batch_size, with which
	// the fluid policy looks up the utilisation of the model the job's
	// meta caravan.model names (its registered profile) when the trial
	// reports none, as on simulated GPUs. The template must declare
	// caravan.batch_size in meta_optional if it is dispatched directly.
	BatchParam string  `hcl:"batch_param,optional"`
	Params     []Param `hcl:"param,block"`
}

// MetaBatchSize is the meta key of BatchParam's value: the live
// scheduler's caravan.batch_size (scheduler/live.MetaBatchSize).
const MetaBatchSize = "caravan.batch_size"

// Budget is the training each rung grants, in Unit (steps or epochs).
type Budget struct {
	Unit string  `hcl:"unit,optional"`
	Min  float64 `hcl:"min,optional"`
	Max  float64 `hcl:"max"`
	// Reduction is successive halving's η: 1/η of a rung is promoted and
	// each rung trains η× longer (default 3).
	Reduction float64 `hcl:"reduction,optional"`
	// Total caps the budget spent over all trials (0 = no cap).
	Total float64 `hcl:"total,optional"`
}

// Param is one dimension of the search space.
type Param struct {
	Name   string   `hcl:"name,label"`
	Type   string   `hcl:"type"`
	Values []string `hcl:"values,optional"`
	Min    float64  `hcl:"min,optional"`
	Max    float64  `hcl:"max,optional"`
	// Points is how many grid points a continuous parameter gets (grid).
	Points int `hcl:"points,optional"`
}

type specFile struct {
	Tunes []Spec `hcl:"tune,block"`
}

// ParseSpec decodes and validates an HCL spec; filename is used in errors.
func ParseSpec(filename string, src []byte) (*Spec, error) {
	var f specFile
	if err := hclsimple.Decode(hclName(filename), src, nil, &f); err != nil {
		return nil, err
	}
	if len(f.Tunes) != 1 {
		return nil, fmt.Errorf("%s: want exactly one tune block, found %d", filename, len(f.Tunes))
	}
	s := f.Tunes[0]
	s.setDefaults()
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	return &s, nil
}

// hclName makes hclsimple pick the native syntax whatever the file is called.
func hclName(filename string) string {
	if strings.HasSuffix(filename, ".hcl") {
		return filename
	}
	return filename + ".hcl"
}

func (s *Spec) setDefaults() {
	if s.Mode == "" {
		s.Mode = "min"
	}
	if s.Task == "" {
		s.Task = "trial"
	}
	if s.Sampler == "" {
		s.Sampler = "random"
	}
	if s.Algorithm == AlgGrid {
		s.Sampler = "grid"
	}
	if s.Sampler == "grid" && s.Trials == 0 && s.Algorithm != AlgHyperband && s.Algorithm != AlgBOHB {
		s.Trials = gridSize(s.Params)
	}
	if s.Budget.Unit == "" {
		s.Budget.Unit = "steps"
	}
	if s.Budget.Reduction == 0 {
		s.Budget.Reduction = 3
	}
	if s.Budget.Min == 0 {
		s.Budget.Min = s.Budget.Max
	}
}

// Validate names the first bad field.
func (s *Spec) Validate() error {
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("tune %q: %s: %s", s.Name, field, fmt.Sprintf(format, a...))
	}
	if len(s.Params) == 0 {
		return bad("param", "the search space is empty: add at least one param block")
	}
	seen := map[string]bool{}
	for i := range s.Params {
		p := &s.Params[i]
		if seen[p.Name] {
			return bad("param."+p.Name, "declared twice")
		}
		seen[p.Name] = true
		if err := p.validate(s.Sampler == "grid"); err != nil {
			return bad("param."+p.Name, "%v", err)
		}
	}
	switch {
	case s.Metric == "":
		return bad("metric", "must name the progress-file key to optimise")
	case s.Mode != "min" && s.Mode != "max":
		return bad("mode", "%q must be \"min\" or \"max\"", s.Mode)
	case !contains(Algorithms, s.Algorithm):
		return bad("algorithm", "unknown algorithm %q (valid: %s)", s.Algorithm, strings.Join(Algorithms, ", "))
	case s.Sampler != "random" && s.Sampler != "grid":
		return bad("sampler", "%q must be \"random\" or \"grid\"", s.Sampler)
	case s.Trials < 0:
		return bad("trials", "must be ≥ 0, got %d", s.Trials)
	case s.Trials == 0 && s.Algorithm != AlgGrid && s.Algorithm != AlgHyperband && s.Algorithm != AlgBOHB:
		return bad("trials", "algorithm %q needs trials > 0", s.Algorithm)
	case s.Parallel < 0:
		return bad("parallel", "must be ≥ 0, got %d", s.Parallel)
	case s.Budget.Unit != "steps" && s.Budget.Unit != "epochs":
		return bad("budget.unit", "%q must be \"steps\" or \"epochs\"", s.Budget.Unit)
	case !(s.Budget.Max > 0) || math.IsInf(s.Budget.Max, 0):
		return bad("budget.max", "must be a positive number, got %v", s.Budget.Max)
	case !(s.Budget.Min > 0) || s.Budget.Min > s.Budget.Max:
		return bad("budget.min", "must be > 0 and ≤ budget.max (%v), got %v", s.Budget.Max, s.Budget.Min)
	case !(s.Budget.Reduction >= 2) || s.Budget.Reduction > 100:
		return bad("budget.reduction", "must be in [2, 100], got %v", s.Budget.Reduction)
	case !(s.Budget.Total >= 0) || math.IsInf(s.Budget.Total, 0):
		return bad("budget.total", "must be ≥ 0 (0 = no cap), got %v", s.Budget.Total)
	case s.Trials > maxTrials:
		return bad("trials", "at most %d, got %d", maxTrials, s.Trials)
	case s.Checkpoint != "" && !path.IsAbs(s.Checkpoint):
		return bad("checkpoint", "%q must be an absolute path (as trials see it)", s.Checkpoint)
	}
	if err := s.validateBatchParam(); err != nil {
		return bad("batch_param", "%v", err)
	}
	if s.Sampler == "grid" {
		if n := gridSize(s.Params); n > maxTrials {
			return bad("param", "the grid has %d points, more than %d", n, maxTrials)
		}
	}
	return nil
}

// validateBatchParam: BatchParam, if set, is a choice of whole numbers ≥ 1
// or an int range from ≥ 1.
func (s *Spec) validateBatchParam() error {
	if s.BatchParam == "" {
		return nil
	}
	for _, p := range s.Params {
		if p.Name != s.BatchParam {
			continue
		}
		switch p.Type {
		case ParamInt:
			if p.Min < 1 {
				return fmt.Errorf("param %q: a batch size must be ≥ 1, got min %v", p.Name, p.Min)
			}
			return nil
		case ParamChoice:
			for _, v := range p.Values {
				if x, err := strconv.ParseFloat(v, 64); err != nil || x < 1 || x != math.Trunc(x) || x > 1<<20 {
					return fmt.Errorf("param %q: value %q is not a batch size (a whole number from 1 to %d)", p.Name, v, 1<<20)
				}
			}
			return nil
		}
		return fmt.Errorf("param %q: a batch size must be a choice or an int, not %s", p.Name, p.Type)
	}
	return fmt.Errorf("%q is not a declared param", s.BatchParam)
}

// maxTrials bounds a tuning job's configurations (state lives in one
// Nomad Variable).
const maxTrials = 4096

func (p *Param) validate(grid bool) error {
	switch p.Type {
	case ParamChoice:
		if len(p.Values) == 0 {
			return fmt.Errorf("values: a choice needs at least one value")
		}
		return nil
	case ParamUniform, ParamLogUniform, ParamInt:
	default:
		return fmt.Errorf("type: unknown type %q (valid: choice, uniform, log_uniform, int)", p.Type)
	}
	switch {
	case math.IsNaN(p.Min) || math.IsNaN(p.Max) || math.IsInf(p.Min, 0) || math.IsInf(p.Max, 0):
		return fmt.Errorf("min/max: must be finite numbers")
	case p.Min > p.Max:
		return fmt.Errorf("min: %v is greater than max %v", p.Min, p.Max)
	case p.Type == ParamLogUniform && p.Min <= 0:
		return fmt.Errorf("min: a log_uniform range must be positive, got %v", p.Min)
	case p.Type == ParamInt && (p.Min != math.Trunc(p.Min) || p.Max != math.Trunc(p.Max)):
		return fmt.Errorf("min/max: an int range needs whole numbers")
	case math.Abs(p.Min) > 1e15 || math.Abs(p.Max) > 1e15:
		return fmt.Errorf("min/max: magnitudes above 1e15 are not supported")
	case grid && p.Type == ParamInt && p.Points == 0 && p.Max-p.Min >= maxTrials:
		return fmt.Errorf("points: an int range this wide needs points for grid search")
	case p.Points < 0:
		return fmt.Errorf("points: must be ≥ 0, got %d", p.Points)
	case grid && p.Type != ParamInt && p.Points == 0:
		return fmt.Errorf("points: a %s parameter needs points ≥ 1 for grid search", p.Type)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
