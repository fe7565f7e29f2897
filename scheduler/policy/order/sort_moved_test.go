package order

import "testing"

// With every moved set radix-sorted (sortMoved: movedRadix lowered to
// 8, so from 32 jobs a re-rank merges up to half of them, 2D-Gittins' up
// to 7/8), the incremental orderings still rank exactly as a fresh full
// sort: listed, by position, tracked 2D-Gittins whose never-run run
// moves and is split off, and tracked Lucid. The split, and a 2D-Gittins
// merge of more than half, must really happen.
func TestMovedRadixSameRanking(t *testing.T) {
	defer func(n int) { movedRadix = n }(movedRadix)
	movedRadix = 8
	t.Run("listed", TestIncrementalOrderMatchesSortOverTime)
	t.Run("by-position", TestIncrementalByPositionMatchesSort)
	t.Run("lucid", TestLucidTrackedSameRanking)
	splitsBefore, mostBefore := movedSplits.Load(), mergedMost.Load()
	t.Run("gittins-run", TestGittinsRunSameRanking)
	if movedSplits.Load() == splitsBefore {
		t.Fatal("no re-rank split the never-run jobs off its moved ones")
	}
	// 2D-Gittins merges in up to 7/8 of its jobs (movedMost)
	if mergedMost.Load() == mostBefore {
		t.Fatal("no 2D-Gittins re-rank merged in more than half its jobs")
	}
}
