package estimate

import "math"

// Errors is the estimator's out-of-sample accuracy over the finished jobs
// it predicted before learning them.
type Errors struct {
	N                     int
	FractionMAE, MemMAE   float64 // mean absolute error (fraction, MiB)
	FractionMAPE, MemMAPE float64 // mean absolute percentage error, %
	fracAPEN, memAPEN     int     // samples with a non-zero truth
	fracAbs, memAbs       float64
	fracAPESum, memAPESum float64
}

type errStats struct{ Errors }

func (s *errStats) add(predF, trueF, predM, trueM float64) {
	s.N++
	s.fracAbs += math.Abs(predF - trueF)
	s.memAbs += math.Abs(predM - trueM)
	if trueF > 0 {
		s.fracAPEN++
		s.fracAPESum += math.Abs(predF-trueF) / trueF
	}
	if trueM > 0 {
		s.memAPEN++
		s.memAPESum += math.Abs(predM-trueM) / trueM
	}
}

// Errors reports MAE and MAPE of the raw (headroom-free) predictions.
func (e *Estimator) Errors() Errors {
	s := e.errs.Errors
	if s.N > 0 {
		s.FractionMAE, s.MemMAE = s.fracAbs/float64(s.N), s.memAbs/float64(s.N)
	}
	if s.fracAPEN > 0 {
		s.FractionMAPE = 100 * s.fracAPESum / float64(s.fracAPEN)
	}
	if s.memAPEN > 0 {
		s.MemMAPE = 100 * s.memAPESum / float64(s.memAPEN)
	}
	return s
}
