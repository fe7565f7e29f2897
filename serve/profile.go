package serve

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// ProfilePoint is one measured batch: size, padded input and output
// lengths, and its latency at the front end.
type ProfilePoint struct {
	Batch, In, Out int
	Latency        time.Duration
}

// ProfileGrid is what Measure runs: every combination, Reps times each.
type ProfileGrid struct {
	Batches, Ins, Outs []int
	Reps               int
}

// Measure runs the grid against a real worker, in a shuffled order so slow
// spells of a shared machine do not land on one corner of the grid.
func Measure(ctx context.Context, w Worker, model string, g ProfileGrid) ([]ProfilePoint, error) {
	var todo []ProfilePoint
	for r := 0; r < max(g.Reps, 1); r++ {
		for _, b := range g.Batches {
			for _, in := range g.Ins {
				for _, out := range g.Outs {
					todo = append(todo, ProfilePoint{Batch: b, In: in, Out: out})
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(todo), func(i, j int) { todo[i], todo[j] = todo[j], todo[i] })
	for i := range todo {
		p := &todo[i]
		items := make([]WorkItem, p.Batch)
		for k := range items {
			items[k] = WorkItem{ID: fmt.Sprintf("p%d-%d", i, k), InputLen: p.In, MaxTokens: p.Out}
		}
		start := time.Now()
		if _, err := w.Run(ctx, model, items); err != nil {
			return nil, err
		}
		p.Latency = time.Since(start)
	}
	return todo, nil
}

// WriteProfile writes points as CSV: batch,in,out,latency_ms.
func WriteProfile(w io.Writer, pts []ProfilePoint) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"batch", "in", "out", "latency_ms"}); err != nil {
		return err
	}
	for _, p := range pts {
		err := cw.Write([]string{strconv.Itoa(p.Batch), strconv.Itoa(p.In), strconv.Itoa(p.Out), strconv.FormatFloat(float64(p.Latency.Microseconds())/1000, 'f', 3, 64)})
		if err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// maxProfileMS bounds a measured latency (an hour), far below overflow.
const maxProfileMS = 3.6e6

// ReadProfile parses WriteProfile's CSV.
func ReadProfile(r io.Reader) ([]ProfilePoint, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 4
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if len(recs) == 0 || recs[0][0] != "batch" || recs[0][3] != "latency_ms" {
		return nil, fmt.Errorf("profile: want the header batch,in,out,latency_ms")
	}
	var out []ProfilePoint
	for i, rec := range recs[1:] {
		var v [3]int
		for j := range v {
			if v[j], err = strconv.Atoi(rec[j]); err != nil || v[j] < 0 {
				return nil, fmt.Errorf("profile: line %d column %d: %q is not a non-negative integer", i+2, j+1, rec[j])
			}
		}
		ms, err := strconv.ParseFloat(rec[3], 64)
		if err != nil || !(ms > 0 && ms <= maxProfileMS) { // !(…) also refuses NaN
			return nil, fmt.Errorf("profile: line %d latency_ms: %q is not in (0, %v]", i+2, rec[3], float64(maxProfileMS))
		}
		out = append(out, ProfilePoint{Batch: v[0], In: v[1], Out: v[2], Latency: time.Duration(ms * float64(time.Millisecond))})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("profile: no points")
	}
	return out, nil
}

// ExecModel is a simulated executor driven by measured latencies: the
// median at each grid point, interpolated linearly between grid points in
// batch size, input and output length (and extrapolated along the last
// segment beyond the grid), times a noise factor drawn from the measured
// spread (each measurement over its point's median).
type ExecModel struct {
	bs, ins, outs []int
	med           map[[3]int]float64 // ms
	noise         []float64
}

// NewExecModel builds the model; every grid combination must be measured.
func NewExecModel(pts []ProfilePoint) (*ExecModel, error) {
	by := map[[3]int][]float64{}
	m := &ExecModel{med: map[[3]int]float64{}}
	for _, p := range pts {
		k := [3]int{p.Batch, p.In, p.Out}
		by[k] = append(by[k], float64(p.Latency.Microseconds())/1000)
		m.bs, m.ins, m.outs = append(m.bs, p.Batch), append(m.ins, p.In), append(m.outs, p.Out)
	}
	for _, s := range []*[]int{&m.bs, &m.ins, &m.outs} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
	}
	for _, b := range m.bs {
		for _, in := range m.ins {
			for _, out := range m.outs {
				v := by[[3]int{b, in, out}]
				if len(v) == 0 {
					return nil, fmt.Errorf("profile: no measurement for batch %d in %d out %d", b, in, out)
				}
				slices.Sort(v)
				med := v[len(v)/2]
				m.med[[3]int{b, in, out}] = med
				for _, x := range v {
					m.noise = append(m.noise, x/med)
				}
			}
		}
	}
	return m, nil
}

// Mean is the interpolated median latency of a batch.
func (m *ExecModel) Mean(n, in, out int) time.Duration {
	bi, bf := seg(m.bs, n)
	ii, iff := seg(m.ins, in)
	oi, of := seg(m.outs, out)
	var ms float64
	for db := 0; db < 2; db++ {
		for di := 0; di < 2; di++ {
			for do := 0; do < 2; do++ {
				w := wt(bf, db) * wt(iff, di) * wt(of, do)
				if w != 0 {
					ms += w * m.med[[3]int{m.bs[bi+db], m.ins[ii+di], m.outs[oi+do]}]
				}
			}
		}
	}
	return time.Duration(max(ms, 0.01) * float64(time.Millisecond))
}

// Sample draws one latency: Mean times a measured noise factor.
func (m *ExecModel) Sample(rng *rand.Rand, n, in, out int) time.Duration {
	return time.Duration(float64(m.Mean(n, in, out)) * m.noise[rng.IntN(len(m.noise))])
}

// seg finds the grid segment [i, i+1] for x and x's fraction along it
// (beyond the ends: the nearest segment, extrapolated).
func seg(grid []int, x int) (int, float64) {
	if len(grid) == 1 {
		return 0, 0
	}
	i := 0
	for i < len(grid)-2 && x > grid[i+1] {
		i++
	}
	f := float64(x-grid[i]) / float64(grid[i+1]-grid[i])
	return i, max(f, 0)
}

func wt(f float64, side int) float64 {
	if side == 0 {
		return 1 - f
	}
	return f
}
