package fluid

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"sort"
	"sync"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// Profile is a model's measured demand by batch size, registered so the
// planner knows a trial's utilisation before (or without) observing it:
// the live scheduler reports none for simulated GPUs, where a trial's work
// runs on the node's CPU. A job names its model in Job.Model (meta
// caravan.model) and its batch in Features.BatchSize (caravan.batch_size).
type Profile struct {
	Model  string         `json:"model"`
	Points []ProfilePoint `json:"points"`
}

// ProfilePoint is one measured batch size.
type ProfilePoint struct {
	Batch float64 `json:"batch"`
	// StepSec is seconds per training step alone (kept for reference: a
	// trial's worker count is fixed unless it is elastic, so only Util
	// enters the plan).
	StepSec float64 `json:"step_s"`
	// Util is its busy share of the device when alone (0..1].
	Util float64 `json:"util"`
}

// Profiles maps a model name to its profile.
type Profiles map[string]Profile

// ParseProfile reads a profile's JSON (extra fields, such as how it was
// measured, are ignored) and checks it, naming the bad field.
func ParseProfile(data []byte) (Profile, error) {
	var p Profile
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("profile: %w", err)
	}
	if p.Model == "" {
		return p, fmt.Errorf("profile: model: missing")
	}
	if len(p.Points) == 0 {
		return p, fmt.Errorf("profile %s: points: none", p.Model)
	}
	for i, pt := range p.Points {
		switch {
		case !(pt.Batch >= 1) || math.IsInf(pt.Batch, 0):
			return p, fmt.Errorf("profile %s: points[%d].batch: want ≥ 1, got %v", p.Model, i, pt.Batch)
		case !(pt.Util > 0 && pt.Util <= 1):
			return p, fmt.Errorf("profile %s: points[%d].util: want a share in (0, 1], got %v", p.Model, i, pt.Util)
		case !(pt.StepSec >= 0) || math.IsInf(pt.StepSec, 0):
			return p, fmt.Errorf("profile %s: points[%d].step_s: want ≥ 0, got %v", p.Model, i, pt.StepSec)
		}
	}
	sort.Slice(p.Points, func(a, b int) bool { return p.Points[a].Batch < p.Points[b].Batch })
	return p, nil
}

// At is the profile at batch: linear between measured batches, the
// nearest measured one outside them.
func (p Profile) At(batch float64) ProfilePoint {
	pts := p.Points
	i := sort.Search(len(pts), func(i int) bool { return pts[i].Batch >= batch })
	switch {
	case i == 0:
		return pts[0]
	case i == len(pts):
		return pts[len(pts)-1]
	}
	a, b := pts[i-1], pts[i]
	x := (batch - a.Batch) / (b.Batch - a.Batch)
	return ProfilePoint{Batch: batch, StepSec: a.StepSec + x*(b.StepSec-a.StepSec), Util: a.Util + x*(b.Util-a.Util)}
}

// fill gives j's trial the profile's utilisation where j reports none
// (Util 0) and names a profiled model with a batch size.
func (ps Profiles) fill(j *policy.Job, t *Trial) {
	if t.Util > 0 || j.Model == "" || !(j.Features.BatchSize > 0) {
		return
	}
	if p, ok := ps[j.Model]; ok {
		t.Util = p.At(j.Features.BatchSize).Util
	}
}

//go:embed profiles/*.json
var builtinFS embed.FS

// BuiltinProfiles are the profiles checked in under profiles/ (see the
// README there for how each was measured).
var BuiltinProfiles = sync.OnceValue(func() Profiles {
	out := Profiles{}
	names, _ := builtinFS.ReadDir("profiles")
	for _, e := range names {
		if path.Ext(e.Name()) != ".json" {
			continue
		}
		data, _ := builtinFS.ReadFile("profiles/" + e.Name())
		p, err := ParseProfile(data)
		if err != nil { // checked in: TestBuiltinProfiles parses each
			panic(fmt.Sprintf("fluid: built-in %s: %v", e.Name(), err))
		}
		out[p.Model] = p
	}
	return out
})
