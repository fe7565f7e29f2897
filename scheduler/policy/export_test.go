package policy

import (
	"fmt"
	"math"
)

// every test checks the refs of gangs written by a GangWriter
func init() { verifyGangs = true }

// TrialMemoOff turns the preemption trial memo off (true) or on.
func TrialMemoOff(off bool) { trialMemoOff = off }

// TrialMemoStats are the trial memo's lookups and hits in f's last round.
func TrialMemoStats(f *Framework) (lookups, hits int) {
	if f.free == nil || f.free.trials == nil {
		return 0, 0
	}
	return f.free.trials.lookups, f.free.trials.hits
}

// CapacityState is f's capacity as its last round left it: every GPU's
// state and node summary, the totals and Epoch, as text with float bits.
func CapacityState(f *Framework) string {
	c := f.free
	if c == nil {
		return ""
	}
	b := fmt.Appendf(nil, "free %x whole %d epoch %d\n", math.Float64bits(c.freeSum), c.wholeFree, c.Epoch)
	for i := range c.Nodes {
		n := &c.Nodes[i]
		b = fmt.Appendf(b, "%s %x %d %x %x|", n.Name, math.Float64bits(n.FreeSum), n.WholeFree, math.Float64bits(n.MaxFree), math.Float64bits(c.sums[i]))
		for _, g := range n.GPUs {
			b = fmt.Appendf(b, " %x/%d/%x", math.Float64bits(g.Free), g.FreeMem, math.Float64bits(g.Util))
		}
		b = append(b, '\n')
	}
	return string(b)
}

// RankedByPrev reports whether f's last round copied its kept entries
// by the ordering's last-rank map (PrevRanker).
func RankedByPrev(f *Framework) bool { return f.jobs.byPrev }

// LeftJobs reports that f's last round read its ranked jobs from the
// snapshot (IndexOrderer).
func LeftJobs(f *Framework) bool { return f.leftJobs }

// PreparesFollowed is how many of its ordering's re-ranks between
// decisions f followed by the ordering's map (PrevRanker).
func PreparesFollowed(f *Framework) int { return f.jobs.followed }

// SetSkipWalk sets the fewest ranked jobs the skipping walk takes and
// whether it is off, and returns the old values.
func SetSkipWalk(least int, off bool) (int, bool) {
	oldLeast, oldOff := skipWalkMin, skipWalkOff
	skipWalkMin, skipWalkOff = least, off
	return oldLeast, oldOff
}

// SkipWalkPassed is how many ranges of ranks f's last skipping walk
// passed over (0: it walked job by job).
func SkipWalkPassed(f *Framework) int { return len(f.skips.segs) }

// SkipWalkVisits is how many jobs f's last skipping walk admitted (0: it
// walked job by job, or visited none).
func SkipWalkVisits(f *Framework) int { return f.skips.visits }

// SkipWalkKnown is how many queued jobs the last skipping walk's index
// found a kept shape id for.
func SkipWalkKnown(f *Framework) int { return f.skips.known }

// SetKeptShapes sets how many shapes the skipping walk keeps from round
// to round before it starts afresh; it returns the last bound.
func SetKeptShapes(n int) int {
	last := keptShapesMax
	keptShapesMax = n
	return last
}

// HolTailParts is how many parts f's last split pass behind a blocked
// head was cut into (0: none ran yet).
func HolTailParts(f *Framework) int { return len(f.holTail.parts) }

// SetHolSplit turns waitBehind's split passes off or on and returns the
// old setting.
func SetHolSplit(off bool) bool {
	old := holSplitOff
	holSplitOff = off
	return old
}

// FitJumpsOff turns the trials' counted prefix (preempt_fit.go) off
// (true) or on.
func FitJumpsOff(off bool) { fitJumpsOff = off }
