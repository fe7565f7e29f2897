package order

// Prepare re-ranks, between decisions, the last tracked call's jobs under
// the model as it is now, and reports whether it did (policy.OrderPreparer).
// A refit moves every main-phase job's size: at 10k × 100k the decision
// after one re-sized ~83,500 queued jobs and re-sorted ~68 % of the keys,
// ~11.5 ms against ~4.7 for the others, every third decision while the
// model is young. Done here, from the slots alone (no job is read), the
// next call finds each unchanged job's size computed at its version and
// its key where the re-sort put it, and re-sorts only what changed since.
// No decision changes: the next call's keys are what they would be
// (unprepare covers a job whose features moved in between), and
// sortMatched ranks any keys exactly from any kept order.
//
// It does nothing after an untracked call, while an entry is shared by
// two slots (the first listed must bring it, as Order does), or when the
// model has not moved since the keys were sized.
func (l *Lucid) Prepare() bool {
	v := l.est.Version()
	if v == l.keyedAt || l.shared > 0 {
		return false
	}
	ks := l.sc.lastKeys()
	if ks == nil {
		return false
	}
	l.kk.version, l.kk.sigma, l.kk.preparing = v, l.est.Sigma(), true
	defer func() { l.kk.preparing = false }()
	l.ids.sync(l.est)
	lucidSplit(len(ks), lucidWorkersFor(len(ks)), func(_, lo, hi int) { l.resize(ks[lo:hi]) })
	l.sc.resortLast(ks)
	l.keyedAt, l.prepares = v, l.prepares+1
	return true
}

// resize sets the size of each main-phase key of ks from its slot, at the
// model's version. The others keep theirs: a job in its profiling run is
// keyed by its shape and queueing time, and a job that is never a victim,
// in a call without reasons, by its position (sizeKeys).
func (l *Lucid) resize(ks []keyed) {
	for x := range ks {
		if k := &ks[x]; k.k[0] == 2 {
			k.k[1] = l.slotSize(int(k.at) - 1)
		}
	}
}
