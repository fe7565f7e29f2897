package place

// PairPredictor is the placer's pair predictor (nil without one), so an
// executor can feed a learning predictor what co-located pairs measured
// (e.g. the simulator and colocate.ExplorePairs).
func (i *Interference) PairPredictor() PairPredictor { return i.cfg.Pairs }
