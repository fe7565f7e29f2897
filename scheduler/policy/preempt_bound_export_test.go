package policy

import (
	"fmt"
	"math"
)

// FailedBoundOff turns the failed-trial bound off (preempt_bound.go) and
// returns how many trials it has skipped so far.
func FailedBoundOff(off bool) int64 {
	failedBoundOff = off
	return boundSkips.Load()
}

// MaxHeldCounted sets the most GPUs a trial's victims may hold for futile
// to read them unasked, until the returned restore.
func MaxHeldCounted(n float64) (restore func()) {
	old := maxHeldCounted
	maxHeldCounted = n
	return func() { maxHeldCounted = old }
}

// FreeState is CapacityState without GPU Util, which no DemandMonotone
// placer reads (roundTrips).
func FreeState(f *Framework) string {
	if f.free == nil {
		return ""
	}
	return fmt.Sprintf("epoch %d\n", f.free.Epoch) + FreeGPUs(f)
}

// FreeGPUs is FreeState without the Epoch, which counts releases: a
// counted trial (preempt_fit.go) releases fewer victims than an eager
// one for the same decision.
func FreeGPUs(f *Framework) string {
	c := f.free
	if c == nil {
		return ""
	}
	b := fmt.Appendf(nil, "free %x whole %d\n", math.Float64bits(c.freeSum), c.wholeFree)
	for i := range c.Nodes {
		n := &c.Nodes[i]
		b = fmt.Appendf(b, "%s %x %d %d %x %x|", n.Name, math.Float64bits(n.FreeSum), n.WholeFree, n.Partial,
			math.Float64bits(n.MaxFree), math.Float64bits(c.sums[i]))
		for _, g := range n.GPUs {
			b = fmt.Appendf(b, " %x/%d", math.Float64bits(g.Free), g.FreeMem)
		}
		b = append(b, '\n')
	}
	return string(b)
}

// LazyCounts is how many victims f's lazy trials (preempt_lazy.go) have
// released virtually so far, and how many of them never in the Capacity.
func LazyCounts(f *Framework) (adds, kept int64) {
	return f.lazy.adds, f.lazy.adds - f.lazy.materialised
}

// LazyMaxSlots sets the most slots a victim may hold for a trial to stay
// lazy, until the returned restore.
func LazyMaxSlots(n int) (restore func()) {
	old := lazyMaxSlots
	lazyMaxSlots = n
	return func() { lazyMaxSlots = old }
}

// LazyTooLarge is how many victims ended a lazy trial by their size.
func LazyTooLarge(f *Framework) int64 { return f.lazy.tooLarge }

// LazyTruncated is how many materialised victims lazy trials narrowing
// to the fewest victims put back.
func LazyTruncated(f *Framework) int64 { return f.lazy.truncated }

// RefsKept is how many victims' entries f's victimRefs kept by their
// stamps.
func RefsKept(f *Framework) int { return f.refsKept }

// Donations is how many victims' slot storage keepRefs has reused.
func Donations() int64 { return donations.Load() }

// WatchRecheck checks every answer roundTrips' recheck gives against
// exact's read of the victims, until the returned stop: seen counts the
// answers, wrong those exact contradicts (a hold exact refuses, or, for
// the rank the loads were read for, a refusal where exact holds).
func WatchRecheck() (stop func() (seen, wrong int)) {
	recheckSeen = func(r *round, i int, held bool) {
		seen := r.loaded
		loads := append([]gpuLoad(nil), r.loads...)
		fresh := r.exact(i)
		r.loads, r.loaded = append(r.loads[:0], loads...), seen
		seenN++
		if held && !fresh || !held && fresh && seen.i == i {
			wrongN++
		}
	}
	return func() (int, int) {
		recheckSeen = nil
		s, w := seenN, wrongN
		seenN, wrongN = 0, 0
		return s, w
	}
}

var seenN, wrongN int

// WrittenGangs counts the commits that took a GangWriter's refs.
func WrittenGangs() int64 { return writtenGangs.Load() }

// CheckedGangs counts the written gangs whose commit skipped its
// over-commit check, their writer having found them fitting.
func CheckedGangs() int64 { return checkedGangs.Load() }

// GangNotesOff makes commits resolve every gang by name (or not).
func GangNotesOff(off bool) { gangNotesOff = off }

// ReserveTaken is how many gangs of f's capacity took a pre-faulted
// spare (capacity_reserve.go).
func ReserveTaken(f *Framework) int {
	if f.free == nil {
		return 0
	}
	return f.free.reserve.taken
}
