package policy

// Links holds measured bandwidth between node pairs in Gbit/s (the gossip
// view live, a topology in the simulator). A cluster without Links is
// placed by per-node uplinks and racks alone, as before.
type Links struct {
	gbps map[[2]string]float64
}

// NewLinks returns an empty link table.
func NewLinks() *Links { return &Links{gbps: map[[2]string]float64{}} }

func linkKey(a, b string) [2]string {
	if b < a {
		a, b = b, a
	}
	return [2]string{a, b}
}

// Set records the bandwidth between a and b (symmetric).
func (l *Links) Set(a, b string, gbps float64) {
	if a == b || !(gbps > 0) {
		return
	}
	l.gbps[linkKey(a, b)] = gbps
}

// Gbps is the measured bandwidth between a and b; false when unknown.
func (l *Links) Gbps(a, b string) (float64, bool) {
	if l == nil {
		return 0, false
	}
	g, ok := l.gbps[linkKey(a, b)]
	return g, ok
}

// Len is the number of measured pairs (0 for nil).
func (l *Links) Len() int {
	if l == nil {
		return 0
	}
	return len(l.gbps)
}

// LinkSpeedProfile is a SpeedProfile that also knows how its step time
// depends on the slowest link its gang's all-reduce crosses.
type LinkSpeedProfile interface {
	SpeedProfile
	// StepTimeAt is seconds per step for shape when the slowest link
	// among its nodes carries bottleneckGbps (≤ 0: as StepTime).
	StepTimeAt(shape []int, bottleneckGbps float64) float64
}
