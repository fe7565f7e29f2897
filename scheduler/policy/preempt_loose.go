package policy

import "slices"

// A RunningSorter's ranking may list each queue's running jobs loosely
// (in a decision without reasons). r.running then lists their ranks in
// that order, and its positions below r.looseFrom are still loose: a
// trial for the queued job at rank i reads the victims ranked below i,
// which are whole queues' running jobs (a queue's running jobs rank
// together, ahead of its queued ones), so sorting those first makes the
// trial read them as an exact ranking would list them. Ranks stay where
// the ranking put them: what is kept by rank (held, preempted, the walk
// info) is unchanged, and every search of r.running for the victims
// below a queued job's rank still finds them, since no queued rank lies
// inside a queue's running block.

// looseVictims notes, as the round indexes its victims, whether the
// ordering left them loose.
func (r *round) looseVictims() {
	r.looseFrom = 0
	if rs, ok := r.f.Order.(RunningSorter); ok && rs.RunningLoose() {
		r.looseFrom = len(r.running)
	}
}

// sortVictims sorts the loose victims below rank i (a queued job's),
// before a trial for it reads them. Later trials are for jobs ranked
// lower, with fewer victims below them, so a decision mostly sorts once,
// and one that tries nothing never.
func (r *round) sortVictims(i int) {
	if r.looseFrom == 0 {
		return
	}
	lo, _ := slices.BinarySearch(r.running, i+1)
	if lo >= r.looseFrom {
		return
	}
	r.f.Order.(RunningSorter).SortRunning(r.running[lo:r.looseFrom])
	r.f.stats.LooseSorted += r.looseFrom - lo
	r.looseFrom = lo
}
