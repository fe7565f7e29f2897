package place

import (
	"slices"
	"sort"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// maxSpreadNodes bounds how many nodes a profile-guided gang may be spread
// over (unless it needs more anyway): measured profiles stop at 16 nodes,
// beyond which a modelled all-reduce no longer changes, so wider shapes
// could only tie and lose to fewer nodes.
const maxSpreadNodes = 16

// speedOf is the job's speed profile, or nil if it has none.
func speedOf(j *policy.Job) policy.SpeedProfile {
	if j == nil {
		return nil
	}
	return j.Speed
}

// fastest refines o, a node set the network rules accept for d, by the
// job's speed profile. pool is every node o could have used (sorted
// roomiest first, o.nodes its shortest holding prefix). It scores o's own
// shape and, for every node count k from len(o.nodes) up to the gang size
// (at most maxSpreadNodes), the most even shape k nodes of the pool can
// hold, and keeps the fastest; ties go to fewer nodes, then to o. A spread
// shape takes the tightest nodes that hold its parts (best fit), so whole
// nodes stay whole for the gangs that need them. If the profile knows no
// step time for o's shape, o is returned as it is.
func fastest(prof policy.SpeedProfile, d policy.Demand, o option, pool []candidate) option {
	base := prefixCounts(o.nodes, d.Workers)
	t0 := prof.StepTime(base)
	if !(t0 > 0) {
		return o
	}
	o.step = t0
	kmin := len(o.nodes)
	kmax := min(d.Workers, len(pool), max(kmin, maxSpreadNodes))
	fits := make([]int, len(pool))
	for i, cd := range pool {
		fits[i] = cd.fit
	}
	var bestCounts []int
	for k := kmin; k <= kmax; k++ {
		counts := evenCounts(fits[:k], d.Workers)
		if slices.Equal(counts, base) {
			continue
		}
		t := prof.StepTime(counts)
		if t > 0 && t < o.step && !nearlyEqual(t, o.step) {
			o.step, bestCounts = t, counts
		}
	}
	if bestCounts == nil {
		return o
	}
	o.nodes = bestFit(pool, bestCounts)
	return o
}

// prefixCounts is how many workers filling cs in order puts on each node.
func prefixCounts(cs []candidate, workers int) []int {
	out := make([]int, 0, len(cs))
	for _, cd := range cs {
		k := min(cd.fit, workers)
		if k == 0 {
			break
		}
		out = append(out, k)
		workers -= k
	}
	return out
}

// evenCounts spreads workers as evenly as nodes with these fits (roomiest
// first, together able to hold workers, len(fits) ≤ workers) allow: every
// node gets min(fit, level−1) and the rest get one more, roomiest first,
// for the lowest level that holds the gang. Counts come out descending.
func evenCounts(fits []int, workers int) []int {
	k := len(fits)
	level := (workers + k - 1) / k
	for {
		got := 0
		for _, f := range fits {
			got += min(f, level)
		}
		if got >= workers {
			break
		}
		level++
	}
	counts := make([]int, k)
	got := 0
	for i, f := range fits {
		counts[i] = min(f, level-1)
		got += counts[i]
	}
	for i, f := range fits {
		if got == workers {
			break
		}
		if f >= level {
			counts[i]++
			got++
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(counts)))
	return counts
}

// bestFit gives each part of a shape the tightest unused node of the pool
// that holds it, smallest part first. It returns the nodes, largest part
// first, each with fit set to its part, so take fills exactly the shape.
// The parts came from the roomiest nodes of the pool, so a node exists for
// each.
func bestFit(pool []candidate, counts []int) []candidate {
	asc := append([]candidate(nil), pool...)
	sort.SliceStable(asc, func(a, b int) bool { return asc[a].fit < asc[b].fit })
	parts := append([]int(nil), counts...)
	sort.Ints(parts)
	nodes := make([]candidate, 0, len(parts))
	next := 0
	for _, want := range parts {
		for asc[next].fit < want {
			next++
		}
		nodes = append(nodes, candidate{node: asc[next].node, fit: want})
		next++
	}
	slices.Reverse(nodes)
	return nodes
}

// nearlyEqual treats step times within a part in a million as a tie, so
// float noise in a profile never decides a placement.
func nearlyEqual(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-6*max(a, b)
}
