package policy

import (
	"fmt"
	"strconv"
)

// Demand is what one gang asks for: Workers slots of Fraction of a GPU and
// MemMiB of GPU memory each.
type Demand struct {
	Workers  int
	Fraction float64
	// MemMiB is per worker; 0 means "no memory cap" for a fraction and
	// "all of the GPU's memory" for a whole GPU.
	MemMiB int64
}

// DemandOf reads a job's gang demand. A zero Fraction means a whole GPU.
func DemandOf(j *Job) (Demand, error) {
	return DemandWith(j, j.Workers)
}

// DemandWith is DemandOf with another worker count (elastic resizing).
func DemandWith(j *Job, workers int) (Demand, error) {
	d := Demand{Workers: workers, Fraction: j.Fraction, MemMiB: j.MemMiB}
	if d.Fraction == 0 {
		d.Fraction = 1
	}
	switch {
	case d.Workers <= 0:
		return d, fmt.Errorf("job %s: workers must be positive, got %d", j.ID, d.Workers)
	case !(d.Fraction > 0 && d.Fraction <= 1):
		return d, fmt.Errorf("job %s: per-worker GPU fraction must be in (0,1], got %g", j.ID, j.Fraction)
	case d.MemMiB < 0:
		return d, fmt.Errorf("job %s: negative GPU memory %d MiB", j.ID, d.MemMiB)
	}
	return d, nil
}

// WholeGPU reports whether each worker takes a full GPU.
func (d Demand) WholeGPU() bool { return d.Fraction >= 1-eps }

// GPUs is the total GPU share of the gang.
func (d Demand) GPUs() float64 { return float64(d.Workers) * d.Fraction }

// SlotMem is the memory one worker takes on g.
func (d Demand) SlotMem(g *FreeGPU) int64 {
	if d.MemMiB == 0 && d.WholeGPU() {
		return g.TotalMem
	}
	return d.MemMiB
}

// FitsOn reports how many of this gang's workers fit on g alone.
func (d Demand) FitsOn(g *FreeGPU) int {
	if d.WholeGPU() {
		if g.Whole() && d.SlotMem(g) <= g.FreeMem {
			return 1
		}
		return 0
	}
	n := int((g.Free + eps) / d.Fraction)
	if d.MemMiB > 0 {
		if m := int(g.FreeMem / d.MemMiB); m < n {
			n = m
		}
	}
	return n
}

// Slot builds one worker's slot on GPU g of node.
func (d Demand) Slot(node string, g *FreeGPU) Slot {
	return Slot{Node: node, GPU: g.Index, Fraction: d.Fraction, MemMiB: d.SlotMem(g)}
}

// String renders a demand for humans, e.g. "4 GPUs" or "2×0.5 GPU".
func (d Demand) String() string {
	if d.WholeGPU() && d.Workers == 1 {
		return "1 GPU"
	}
	return string(d.AppendText(nil))
}

// AppendText appends String's text to b without building a string, for
// callers that write many waiting reasons.
func (d Demand) AppendText(b []byte) []byte {
	b = strconv.AppendInt(b, int64(d.Workers), 10)
	if d.WholeGPU() {
		if d.Workers == 1 {
			return append(b, " GPU"...)
		}
		return append(b, " GPUs"...)
	}
	b = append(b, "×"...)
	return append(strconv.AppendFloat(b, d.Fraction, 'g', 3, 64), " GPU"...)
}
