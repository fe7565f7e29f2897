package ledger

import (
	"errors"
	"fmt"
	"math"

	"github.com/caravan-dl/caravan/driver/gpu"
)

// epsilon absorbs float rounding in fraction sums, so 0.5+0.5 or
// 0.1×10 still fit on one GPU.
const epsilon = 1e-9

// Admit grants req to taskID, or says exactly why it does not fit. A task
// that already holds a grant gets that grant back (plugin recovery).
func (l *Ledger) Admit(taskID string, req Request) (Grant, error) {
	if taskID == "" {
		return Grant{}, errors.New("ledger: empty task ID")
	}
	if math.IsNaN(req.Fraction) || req.Fraction <= 0 || req.Fraction > 1 {
		return Grant{}, fmt.Errorf("gpu_fraction %v must be in (0,1]", req.Fraction)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if held := l.grants[taskID]; len(held) > 0 {
		if len(held) > 1 {
			return Grant{}, fmt.Errorf("task %s already holds %d whole GPUs", taskID, len(held))
		}
		return held[0], nil
	}
	d, err := l.place(req)
	if err != nil {
		return Grant{}, err
	}
	g := Grant{TaskID: taskID, UUID: d.UUID, Index: d.Index, Fraction: req.Fraction, MemMiB: memFor(req, d)}
	l.grants[taskID] = []Grant{g}
	if err := l.saveLocked(); err != nil {
		delete(l.grants, taskID)
		return Grant{}, err
	}
	return g, nil
}

// memFor is the memory req takes on d: explicit, or ceil(Fraction × total).
func memFor(req Request, d gpu.Device) uint64 {
	if req.MemMiB > 0 {
		return req.MemMiB
	}
	// The small subtraction keeps 0.1×81920 = 8192.000000000001 at 8192.
	m := uint64(math.Ceil(req.Fraction*float64(d.MemoryMiB) - 1e-6))
	return min(max(m, 1), d.MemoryMiB)
}

func fits(u Usage, fraction float64, mem uint64) bool {
	return u.UsedFraction+fraction <= 1+epsilon && mem <= u.FreeMiB()
}

// place picks the GPU for req: the pinned one, or the best fit.
func (l *Ledger) place(req Request) (gpu.Device, error) {
	if req.UUID != "" {
		return l.placePinned(req)
	}
	if len(l.devices) == 0 {
		return gpu.Device{}, fmt.Errorf("gpu_fraction %s requested but this node has no GPUs", fmtFrac(req.Fraction))
	}
	var best gpu.Device
	var bestU Usage
	found := false
	for _, d := range l.devices {
		u := l.usageLocked(d)
		mem := memFor(req, d)
		if !fits(u, req.Fraction, mem) {
			continue
		}
		if !found || better(u, req.Fraction, mem, bestU, req.Fraction, memFor(req, best)) {
			best, bestU, found = d, u, true
		}
	}
	if !found {
		return gpu.Device{}, l.noFit(req)
	}
	return best, nil
}

// better tells whether placing on a leaves less free fraction than on b
// (ties: less free memory; devices are visited in index order, so the
// lower index wins remaining ties).
func better(a Usage, fa float64, ma uint64, b Usage, fb float64, mb uint64) bool {
	leftA, leftB := a.FreeFraction()-fa, b.FreeFraction()-fb
	if math.Abs(leftA-leftB) > epsilon {
		return leftA < leftB
	}
	return a.FreeMiB()-ma < b.FreeMiB()-mb
}

func (l *Ledger) placePinned(req Request) (gpu.Device, error) {
	d, ok := l.byUUID[req.UUID]
	if !ok {
		return gpu.Device{}, fmt.Errorf("GPU %s (gpu_uuids) is not on this node", req.UUID)
	}
	mem := memFor(req, d)
	if mem > d.MemoryMiB {
		return gpu.Device{}, fmt.Errorf("gpu_memory %d MiB exceeds the %d MiB of GPU %d (%s)", mem, d.MemoryMiB, d.Index, d.UUID)
	}
	u := l.usageLocked(d)
	if u.UsedFraction+req.Fraction > 1+epsilon {
		return gpu.Device{}, fmt.Errorf("gpu_fraction %s does not fit on GPU %d (%s): free is %s",
			fmtFrac(req.Fraction), d.Index, d.UUID, fmtFrac(u.FreeFraction()))
	}
	if mem > u.FreeMiB() {
		return gpu.Device{}, fmt.Errorf("gpu_memory %d MiB does not fit on GPU %d (%s): free memory is %d MiB",
			mem, d.Index, d.UUID, u.FreeMiB())
	}
	return d, nil
}

// noFit explains why req fits on no GPU: first the fraction, then memory.
func (l *Ledger) noFit(req Request) error {
	var largest uint64
	for _, d := range l.devices {
		largest = max(largest, d.MemoryMiB)
	}
	if req.MemMiB > largest {
		return fmt.Errorf("gpu_memory %d MiB exceeds every GPU on this node (the largest has %d MiB)", req.MemMiB, largest)
	}
	var most gpu.Device
	var mostU Usage
	for i, d := range l.devices {
		u := l.usageLocked(d)
		if i == 0 || u.FreeFraction() > mostU.FreeFraction()+epsilon {
			most, mostU = d, u
		}
	}
	if mostU.UsedFraction+req.Fraction > 1+epsilon {
		return fmt.Errorf("gpu_fraction %s does not fit on any GPU: best free is %s on GPU %d (%s)",
			fmtFrac(req.Fraction), fmtFrac(mostU.FreeFraction()), most.Index, most.UUID)
	}
	// Some GPU has the fraction free; memory is what is short.
	var roomy gpu.Device
	var roomyU Usage
	found := false
	for _, d := range l.devices {
		u := l.usageLocked(d)
		if u.UsedFraction+req.Fraction > 1+epsilon {
			continue
		}
		if !found || u.FreeMiB() > roomyU.FreeMiB() {
			roomy, roomyU, found = d, u, true
		}
	}
	return fmt.Errorf("gpu_memory %d MiB does not fit on any GPU with gpu_fraction %s free: most free memory is %d MiB on GPU %d (%s)",
		memFor(req, roomy), fmtFrac(req.Fraction), roomyU.FreeMiB(), roomy.Index, roomy.UUID)
}

// fmtFrac prints a fraction with at least two decimals and no float noise:
// 0.6 → "0.60", 0.125 → "0.125", 0.49999999999999994 → "0.50".
func fmtFrac(f float64) string {
	s := fmt.Sprintf("%.6f", math.Round(f*1e6)/1e6)
	for len(s) > 4 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return s
}
