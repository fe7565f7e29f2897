package profile

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
)

// GavelType is one of Gavel's job types: a model at a batch size (0 for the
// models Gavel runs at one size, A3C and CycleGAN) on Scale GPUs.
type GavelType struct {
	Model string
	Batch int
	Scale int
}

// String is the type as Gavel keys it, without the quoting.
func (t GavelType) String() string {
	if t.Batch == 0 {
		return fmt.Sprintf("%s ×%d", t.Model, t.Scale)
	}
	return fmt.Sprintf("%s (batch size %d) ×%d", t.Model, t.Batch, t.Scale)
}

// GavelPair is what two job types measured when they shared one GPU, in
// steps/s: each one's own throughput. Both zero means the pair could not
// run together (Gavel records that as zero throughput).
type GavelPair struct {
	Own, Partner float64
}

// Feasible says whether the pair ran together.
func (p GavelPair) Feasible() bool { return p.Own > 0 && p.Partner > 0 }

// GavelGPU holds one GPU type's measurements: each job type alone (0 when
// it could not run on this GPU), and every measured pair keyed (type,
// partner).
type GavelGPU struct {
	Alone map[GavelType]float64
	Pairs map[[2]GavelType]GavelPair
}

// Gavel is Gavel's simulation_throughputs.json: per GPU type ("v100",
// "p100", "k80", and "*_unconsolidated" for workers spread over nodes).
type Gavel struct {
	GPUs map[string]*GavelGPU
}

// Slowdowns is how much slower each of a and b ran sharing one GPU than
// alone (alone ÷ shared throughput, ≥ 1 unless sharing helped). ok is
// false when the pair was not measured or could not run together.
func (g *Gavel) Slowdowns(gpu string, a, b GavelType) (sa, sb float64, ok bool) {
	m := g.GPUs[gpu]
	if m == nil {
		return 0, 0, false
	}
	p, found := m.Pairs[[2]GavelType{a, b}]
	if !found || !p.Feasible() || !(m.Alone[a] > 0) || !(m.Alone[b] > 0) {
		return 0, 0, false
	}
	return m.Alone[a] / p.Own, m.Alone[b] / p.Partner, true
}

// Types lists one GPU type's job types in a stable order.
func (g *Gavel) Types(gpu string) []GavelType {
	m := g.GPUs[gpu]
	if m == nil {
		return nil
	}
	out := make([]GavelType, 0, len(m.Alone))
	for t := range m.Alone {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if a.Batch != b.Batch {
			return a.Batch < b.Batch
		}
		return a.Scale < b.Scale
	})
	return out
}

var (
	gavelKey   = regexp.MustCompile(`^\('([^']+)', (\d+)\)$`)
	gavelBatch = regexp.MustCompile(`^(.+) \(batch size (\d+)\)$`)
)

// ParseGavelType reads a key such as "('ResNet-18 (batch size 32)', 1)".
func ParseGavelType(key string) (GavelType, error) {
	m := gavelKey.FindStringSubmatch(key)
	if m == nil {
		return GavelType{}, fmt.Errorf("job type %q: want ('<model> (batch size N)', scale)", key)
	}
	scale, err := strconv.Atoi(m[2])
	if err != nil || scale < 1 {
		return GavelType{}, fmt.Errorf("job type %q: scale must be a positive integer", key)
	}
	t := GavelType{Model: m[1], Scale: scale}
	if b := gavelBatch.FindStringSubmatch(m[1]); b != nil {
		t.Model = b[1]
		if t.Batch, err = strconv.Atoi(b[2]); err != nil || t.Batch < 1 {
			return GavelType{}, fmt.Errorf("job type %q: batch size must be a positive integer", key)
		}
	}
	return t, nil
}

// LoadGavel reads simulation_throughputs.json. Errors name the file, the
// GPU type and the key that is wrong.
func LoadGavel(path string) (*Gavel, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	g, err := ParseGavel(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// ParseGavel decodes the JSON text of simulation_throughputs.json.
func ParseGavel(b []byte) (*Gavel, error) {
	var raw map[string]map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("gavel throughputs: %w", err)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("gavel throughputs: no GPU types")
	}
	g := &Gavel{GPUs: map[string]*GavelGPU{}}
	for gpu, types := range raw {
		m, err := parseGavelGPU(types)
		if err != nil {
			return nil, fmt.Errorf("gpu %q: %w", gpu, err)
		}
		g.GPUs[gpu] = m
	}
	return g, nil
}

func parseGavelGPU(types map[string]map[string]json.RawMessage) (*GavelGPU, error) {
	m := &GavelGPU{Alone: map[GavelType]float64{}, Pairs: map[[2]GavelType]GavelPair{}}
	for key, entries := range types {
		t, err := ParseGavelType(key)
		if err != nil {
			return nil, err
		}
		if err := m.addType(t, key, entries); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *GavelGPU) addType(t GavelType, key string, entries map[string]json.RawMessage) error {
	alone, ok := entries["null"]
	if !ok {
		return fmt.Errorf("job type %q: no \"null\" entry (its throughput alone)", key)
	}
	var a float64
	// Zero alone means the type could not run on this GPU (out of memory).
	if err := json.Unmarshal(alone, &a); err != nil || !(a >= 0) {
		return fmt.Errorf("job type %q: throughput alone %s must be a number ≥ 0", key, alone)
	}
	m.Alone[t] = a
	for pk, v := range entries {
		if pk == "null" {
			continue
		}
		if err := m.addPair(t, key, pk, v); err != nil {
			return err
		}
	}
	return nil
}

func (m *GavelGPU) addPair(t GavelType, key, partnerKey string, v json.RawMessage) error {
	p, err := ParseGavelType(partnerKey)
	if err != nil {
		return fmt.Errorf("job type %q, partner: %w", key, err)
	}
	var pair []float64
	if err := json.Unmarshal(v, &pair); err != nil || len(pair) != 2 || !(pair[0] >= 0) || !(pair[1] >= 0) {
		return fmt.Errorf("job type %q, partner %q: %s must be [own, partner] with two throughputs ≥ 0", key, partnerKey, v)
	}
	m.Pairs[[2]GavelType{t, p}] = GavelPair{Own: pair[0], Partner: pair[1]}
	return nil
}

// Unslowed counts a GPU type's single-GPU pairs (ordered: type, partner)
// that ran together, and how many of them record the type at exactly its
// throughput alone, bit for bit. A measured run never repeats a number to
// 1e-12, so these look like Gavel filling a missing measurement with the
// isolated throughput; on V100 80 of 636 do (none on P100 or K80). The
// loader keeps them as recorded (dropping them from training made the
// held-out error worse); callers may count or skip them.
func (g *Gavel) Unslowed(gpu string) (unslowed, pairs int) {
	m := g.GPUs[gpu]
	if m == nil {
		return 0, 0
	}
	for k, p := range m.Pairs {
		if k[0].Scale != 1 || k[1].Scale != 1 || !p.Feasible() || !(m.Alone[k[0]] > 0) || !(m.Alone[k[1]] > 0) {
			continue
		}
		pairs++
		if p.Own == m.Alone[k[0]] {
			unslowed++
		}
	}
	return unslowed, pairs
}

// WithoutUnslowed is a copy of g in which gpu's pairs that record either
// side at exactly its throughput alone (see Unslowed) are marked as not
// run together (zero throughputs), in both orders: a pair whose
// measurement is suspect is then neither used nor co-located. Other GPU
// types are shared with g, not copied.
func (g *Gavel) WithoutUnslowed(gpu string) *Gavel {
	out := &Gavel{GPUs: map[string]*GavelGPU{}}
	for k, v := range g.GPUs {
		out.GPUs[k] = v
	}
	m := g.GPUs[gpu]
	if m == nil {
		return out
	}
	c := &GavelGPU{Alone: m.Alone, Pairs: make(map[[2]GavelType]GavelPair, len(m.Pairs))}
	for k, p := range m.Pairs {
		c.Pairs[k] = p
	}
	for k, p := range m.Pairs {
		if p.Feasible() && (p.Own == m.Alone[k[0]] || p.Partner == m.Alone[k[1]]) {
			c.Pairs[k] = GavelPair{}
			c.Pairs[[2]GavelType{k[1], k[0]}] = GavelPair{}
		}
	}
	out.GPUs[gpu] = c
	return out
}
