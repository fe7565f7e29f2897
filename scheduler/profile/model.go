package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Model is one profiled model: step times by placement shape at one
// reference local batch size, and its convergence curves.
type Model struct {
	Name string
	// RefBatch is the per-GPU batch size the speed model uses: the one
	// measured on the most placement shapes (ties: the smallest).
	RefBatch float64
	// step and sync hold seconds per step (and its all-reduce part) by
	// canonical shape key ("112" = 1+1+2 GPUs over three nodes).
	step, sync map[string]float64
	// netSync is the mean measured sync time by node count (≥ 2),
	// from placements.csv and scalability.csv.
	netSync map[int]float64
	Curves  []Curve
}

// HasSpeed reports whether the model has placement measurements.
func (m *Model) HasSpeed() bool { return len(m.step) > 0 }

// Set is every profiled model under one directory.
type Set struct {
	Models map[string]*Model
}

// Names lists models with speed data, sorted (deterministic assignment).
func (s *Set) Names() []string {
	var out []string
	for n, m := range s.Models {
		if m.HasSpeed() {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Get returns a model or an error listing what exists.
func (s *Set) Get(name string) (*Model, error) {
	m, ok := s.Models[name]
	if !ok || !m.HasSpeed() {
		return nil, fmt.Errorf("no speed profile for model %q (have %s)", name, strings.Join(s.Names(), ", "))
	}
	return m, nil
}

// LoadSet loads every model directory under dir.
func LoadSet(dir string) (*Set, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	s := &Set{Models: map[string]*Model{}}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		m, err := LoadModel(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		s.Models[m.Name] = m
	}
	if len(s.Names()) == 0 {
		return nil, fmt.Errorf("%s: no model with placements.csv", dir)
	}
	return s, nil
}

// LoadModel loads one model directory. placements.csv and scalability.csv
// are optional (gpt_pmp has only curves); validation-*.csv give curves.
func LoadModel(dir string) (*Model, error) {
	m := &Model{Name: filepath.Base(dir), step: map[string]float64{}, sync: map[string]float64{}, netSync: map[int]float64{}}
	if err := m.loadPlacements(filepath.Join(dir, "placements.csv")); err != nil {
		return nil, err
	}
	if err := m.loadScalability(filepath.Join(dir, "scalability.csv")); err != nil {
		return nil, err
	}
	curves, err := loadCurves(dir)
	if err != nil {
		return nil, err
	}
	m.Curves = curves
	return m, nil
}

func (m *Model) loadPlacements(path string) error {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil
	}
	keys, vals, err := readFloats(path, "local_bsz", "step_time", "sync_time")
	if err != nil {
		return err
	}
	for i, k := range keys {
		if _, err := ParseShape(k); err != nil {
			return fmt.Errorf("%s:%d: %w", path, i+2, err)
		}
	}
	m.RefBatch = refBatch(keys, vals)
	net := newMean()
	acc, accSync := newMeanS(), newMeanS()
	for i, k := range keys {
		if vals[i][0] != m.RefBatch {
			continue
		}
		acc.add(k, vals[i][1])
		accSync.add(k, vals[i][2])
		if n := len(k); n >= 2 {
			net.add(n, vals[i][2])
		}
	}
	m.step, m.sync = acc.result(), accSync.result()
	m.netSync = net.result()
	return nil
}

func (m *Model) loadScalability(path string) error {
	if _, err := os.Stat(path); os.IsNotExist(err) || m.RefBatch == 0 {
		return nil
	}
	_, vals, err := readFloats(path, "num_nodes", "local_bsz", "sync_time")
	if err != nil {
		return err
	}
	net := newMean()
	for _, v := range vals {
		if v[1] == m.RefBatch && v[0] >= 2 {
			net.add(int(v[0]), v[2])
		}
	}
	for n, s := range net.result() {
		if _, ok := m.netSync[n]; !ok {
			m.netSync[n] = s
		}
	}
	return nil
}

// refBatch picks the local batch size measured on the most shapes.
func refBatch(keys []string, vals [][]float64) float64 {
	shapes := map[float64]map[string]bool{}
	for i, k := range keys {
		b := vals[i][0]
		if shapes[b] == nil {
			shapes[b] = map[string]bool{}
		}
		shapes[b][k] = true
	}
	best, bestN := 0.0, -1
	for b, s := range shapes {
		if len(s) > bestN || (len(s) == bestN && b < best) {
			best, bestN = b, len(s)
		}
	}
	return best
}

// mean accumulators keyed by int or string.
type meanI struct{ sum, n map[int]float64 }

func newMean() *meanI { return &meanI{map[int]float64{}, map[int]float64{}} }
func (a *meanI) add(k int, v float64) {
	a.sum[k] += v
	a.n[k]++
}
func (a *meanI) result() map[int]float64 {
	out := map[int]float64{}
	for k, s := range a.sum {
		out[k] = s / a.n[k]
	}
	return out
}

type meanS struct{ sum, n map[string]float64 }

func newMeanS() *meanS { return &meanS{map[string]float64{}, map[string]float64{}} }
func (a *meanS) add(k string, v float64) {
	a.sum[k] += v
	a.n[k]++
}
func (a *meanS) result() map[string]float64 {
	out := map[string]float64{}
	for k, s := range a.sum {
		out[k] = s / a.n[k]
	}
	return out
}

// ParseShape turns a placement key like "1124" into GPUs per node.
func ParseShape(key string) ([]int, error) {
	if key == "" {
		return nil, fmt.Errorf("empty placement")
	}
	out := make([]int, 0, len(key))
	for _, c := range key {
		d, err := strconv.Atoi(string(c))
		if err != nil || d < 1 {
			return nil, fmt.Errorf("placement %q: each digit is GPUs on one node (1-9)", key)
		}
		out = append(out, d)
	}
	return out, nil
}
