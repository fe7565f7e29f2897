package fluid

// pack is intra-GPU water-filling for more trials than GPUs: try every
// depth k (trials per GPU) the memory and MaxPack allow, deal trials round
// robin over the GPUs, and keep the depth with the highest total trial
// speed (Σ 1/slowdown), deeper only when it gains MinGain over the best
// shallower one. Trials beyond k·Count wait.
func pack(pool Pool, trials []Trial, cfg Config) Plan {
	best, bestRate := 1, rateAt(pool, trials, 1, cfg)
	for k := 2; k <= cfg.MaxPack; k++ {
		if !fitsMemory(pool, trials, k) {
			break
		}
		r := rateAt(pool, trials, k, cfg)
		if r > bestRate*(1+cfg.MinGain) {
			best, bestRate = k, r
		}
	}
	return dealt(pool, trials, best)
}

// deal assigns trial i (of the first k·Count) to GPU i mod Count.
func deal(pool Pool, n, k int) [][]int {
	gpus := make([][]int, pool.Count)
	for i := 0; i < min(n, k*pool.Count); i++ {
		gpus[i%pool.Count] = append(gpus[i%pool.Count], i)
	}
	return gpus
}

func fitsMemory(pool Pool, trials []Trial, k int) bool {
	for _, on := range deal(pool, len(trials), k) {
		var m int64
		for _, i := range on {
			m += trials[i].MemMiB
		}
		if m > pool.MemMiB {
			return false
		}
	}
	return true
}

// rateAt is the summed speed (1 = one trial alone on a GPU) at depth k.
func rateAt(pool Pool, trials []Trial, k int, cfg Config) float64 {
	r := 0.0
	for _, on := range deal(pool, len(trials), k) {
		d := make([]float64, len(on))
		for j, i := range on {
			d[j] = trials[i].util()
		}
		r += float64(len(on)) / cfg.Interference.Factor(d)
	}
	return r
}

// dealt turns a depth into allocations: GPU g holds at most as many
// trials as the round-robin deal gives it, at equal fractions. A trial
// keeps the GPU it is on where that has room and memory (so re-planning
// moves few running trials), else takes its dealt GPU, else the first
// with room and memory; if none has both, it waits.
func dealt(pool Pool, trials []Trial, k int) Plan {
	slots := deal(pool, len(trials), k)
	room := make([]int, len(slots))
	dealtTo := make([]int, len(trials))
	for i := range dealtTo {
		dealtTo[i] = -1
	}
	for g, on := range slots {
		room[g] = len(on)
		for _, i := range on {
			dealtTo[i] = g
		}
	}
	mem := make([]int64, len(slots))
	gpu := make([]int, len(trials))
	fits := func(i, g int) bool {
		return g >= 0 && g < len(room) && room[g] > 0 && mem[g]+trials[i].MemMiB <= pool.MemMiB
	}
	take := func(i, g int) {
		gpu[i] = g
		room[g]--
		mem[g] += trials[i].MemMiB
	}
	for i, t := range trials { // preferences first, so they are not crowded out
		gpu[i] = -1
		if dealtTo[i] >= 0 && len(t.Current) == 1 && fits(i, t.Current[0]) {
			take(i, t.Current[0])
		}
	}
	for i := range trials {
		if gpu[i] >= 0 || dealtTo[i] < 0 {
			continue
		}
		if fits(i, dealtTo[i]) {
			take(i, dealtTo[i])
			continue
		}
		for g := range room {
			if fits(i, g) {
				take(i, g)
				break
			}
		}
	}
	count := make([]int, len(slots))
	for _, g := range gpu {
		if g >= 0 {
			count[g]++
		}
	}
	var p Plan
	for i, t := range trials {
		if gpu[i] < 0 {
			p.Waiting = append(p.Waiting, t.ID)
			continue
		}
		p.Allocs = append(p.Allocs, Alloc{ID: t.ID, Workers: 1, Fraction: 1 / float64(count[gpu[i]]), GPUs: []int{gpu[i]}})
	}
	return p
}

// spread is inter-GPU water-filling for no more trials than GPUs: every
// trial gets one GPU, then each spare GPU goes to the trial that would
// finish last (remaining steps × step time: the water level), if one more
// worker speeds it up by MinGain; trials that cannot gain are passed over.
func spread(pool Pool, trials []Trial, cfg Config) Plan {
	w := make([]int, len(trials))
	for i := range w {
		w[i] = 1
	}
	for spare := pool.Count - len(trials); spare > 0; spare-- {
		i := highestGainer(trials, w, cfg)
		if i < 0 {
			break
		}
		w[i]++
	}
	return assign(pool, trials, w)
}

// highestGainer is the trial with the latest finish that still gains from
// one more worker, or -1.
func highestGainer(trials []Trial, w []int, cfg Config) int {
	best, level := -1, 0.0
	for i, t := range trials {
		if t.MaxWorkers > 0 && w[i] >= t.MaxWorkers {
			continue
		}
		now, next := t.stepTime(w[i]), t.stepTime(w[i]+1)
		if !(next < now*(1-cfg.MinGain)) {
			continue
		}
		if finish := t.remaining() * now; best < 0 || finish > level {
			best, level = i, finish
		}
	}
	return best
}
