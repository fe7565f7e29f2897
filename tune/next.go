package tune

// Next returns what to do now and marks the trials accordingly: promotions
// and new trials to run (Op "run", with the cumulative budget to reach),
// and trials the algorithm drops (Op "stop"). Call it after every Report;
// it is idempotent when nothing changed.
func (t *Tuner) Next() []Action {
	var out []Action
	if t.Spec.Algorithm == AlgBOHB {
		return t.nextBOHB(out)
	}
	for b := range t.Brackets {
		if t.Brackets[b].Sync {
			out = t.nextSync(b, out)
		} else {
			out = t.nextAsync(b, out)
		}
	}
	return out
}

// bracketTrials is the IDs of bracket b's trials.
func (t *Tuner) bracketTrials(b int) []int {
	br := t.Brackets[b]
	ids := make([]int, br.N)
	for i := range ids {
		ids[i] = br.First + i
	}
	return ids
}

// nextSync is synchronous successive halving: every trial of a rung
// finishes before the best 1/η of them (at least one) go on; the rest stop.
func (t *Tuner) nextSync(b int, out []Action) []Action {
	br := &t.Brackets[b]
	var rung []int
	for _, id := range t.bracketTrials(b) {
		tr := &t.Trials[id]
		switch {
		case tr.Status == Running:
			return out // the rung is not finished
		case tr.Status == Pending:
			out = t.run(tr, 0, out)
		case tr.Rung == br.Rung && (tr.Status == Paused || tr.Status == Failed):
			rung = append(rung, id)
		}
	}
	if len(rung) == 0 || br.Rung >= br.Rungs-1 {
		return out
	}
	return t.promote(b, rung, out)
}

// promote ends synchronous rung br.Rung: the best ⌊n/η⌋ (≥ 1) run on.
func (t *Tuner) promote(b int, rung []int, out []Action) []Action {
	br := &t.Brackets[b]
	keep := max(1, int(float64(len(rung))/t.Spec.Budget.Reduction))
	for i, id := range t.ranked(rung, br.Rung) {
		tr := &t.Trials[id]
		if tr.Status == Failed {
			continue // ranks last (NaN); its failure is its final state
		}
		if i < keep {
			out = t.run(tr, br.Rung+1, out)
		} else {
			out = t.stop(tr, "not in the best 1/η of its rung", out)
		}
	}
	br.Rung++
	return out
}

// nextAsync is ASHA (and random/grid, one rung): whenever a trial is in the
// top ⌊k/η⌋ of the k trials that finished its rung, it is promoted at once;
// otherwise a new trial starts, up to Parallel running. When nothing runs
// or waits, the trials left paused are stopped.
func (t *Tuner) nextAsync(b int, out []Action) []Action {
	br := &t.Brackets[b]
	limit := t.Spec.Parallel
	if limit <= 0 {
		limit = br.N
	}
	running := 0
	for _, id := range t.bracketTrials(b) {
		if t.Trials[id].Status == Running {
			running++
		}
	}
	for r := br.Rungs - 2; r >= 0 && running < limit; r-- {
		for _, id := range t.promotable(b, r) {
			if running >= limit {
				break
			}
			out = t.run(&t.Trials[id], r+1, out)
			running++
		}
	}
	pending := false
	for _, id := range t.bracketTrials(b) {
		tr := &t.Trials[id]
		if tr.Status != Pending {
			continue
		}
		if running >= limit {
			pending = true
			break
		}
		out = t.run(tr, 0, out)
		if tr.Status == Running {
			running++
		}
	}
	if running > 0 || pending {
		return out
	}
	for _, id := range t.bracketTrials(b) {
		if tr := &t.Trials[id]; tr.Status == Paused {
			out = t.stop(tr, "not promoted when the bracket drained", out)
		}
	}
	return out
}

// promotable is the paused trials at rung r that rank in the top ⌊k/η⌋ of
// the k trials with a rung-r result.
func (t *Tuner) promotable(b, r int) []int {
	var done []int
	for _, id := range t.bracketTrials(b) {
		if len(t.Trials[id].Metrics) > r {
			done = append(done, id)
		}
	}
	k := int(float64(len(done)) / t.Spec.Budget.Reduction)
	var out []int
	for _, id := range t.ranked(done, r)[:k] {
		if tr := &t.Trials[id]; tr.Status == Paused && tr.Rung == r {
			out = append(out, id)
		}
	}
	return out
}

// run starts or promotes tr to rung r unless that would overrun the total
// budget, in which case it stops it.
func (t *Tuner) run(tr *Trial, r int, out []Action) []Action {
	target := t.RungBudget(tr.Bracket, r)
	cost := target - tr.Budget
	if tot := t.Spec.Budget.Total; tot > 0 && t.Spent+cost > tot+1e-9 {
		if tr.Status == Pending {
			tr.Status, tr.Note = Stopped, "total budget exhausted before it started"
			return out
		}
		return t.stop(tr, "total budget exhausted", out)
	}
	t.Spent += cost
	tr.Rung, tr.Budget, tr.Status = r, target, Running
	return append(out, Action{Op: "run", Trial: tr.ID, Rung: r, Budget: target})
}

func (t *Tuner) stop(tr *Trial, why string, out []Action) []Action {
	tr.Status, tr.Note = Stopped, why
	return append(out, Action{Op: "stop", Trial: tr.ID, Rung: tr.Rung, Budget: tr.Budget})
}
