package profile

// Link-aware speed model: a gang's step is compute plus a ring
// all-reduce over the nodes it spans,
//
//	allreduce(n, B) = 2(n−1)/n · G / B
//
// where B is the slowest link among the n nodes and G the model's
// effective gradient size. G is calibrated from the measured multi-node
// sync times, which were taken on RefLinkGbps links, so the model returns
// the measurement at RefLinkGbps and adds (or saves) only the difference
// the link makes:
//
//	StepTimeAt(shape, B) = StepTime(shape) + allreduce(n, B) − allreduce(n, RefLinkGbps)
//
// never below the single-GPU compute time.

// RefLinkGbps is the network of the testbed the profiles were measured on
// (Pollux/Sia artifacts: AWS g4dn.12xlarge nodes, 50 Gbit/s).
const RefLinkGbps = 50.0

// RingAllReduceSeconds is the bandwidth term of a ring all-reduce of
// bytes among nodes over links of gbps.
func RingAllReduceSeconds(nodes int, bytes, gbps float64) float64 {
	if nodes < 2 || !(gbps > 0) || !(bytes > 0) {
		return 0
	}
	return 2 * float64(nodes-1) / float64(nodes) * bytes * 8 / (gbps * 1e9)
}

// GradientBytes is the model's effective all-reduce size: the mean over
// measured node counts n ≥ 2 of sync(n) · RefLinkGbps / (2(n−1)/n).
func (m *Model) GradientBytes() float64 {
	var sum float64
	var k int
	for n, s := range m.netSync {
		if n < 2 || !(s > 0) {
			continue
		}
		sum += s * RefLinkGbps * 1e9 / 8 / (2 * float64(n-1) / float64(n))
		k++
	}
	if k == 0 {
		return 0
	}
	return sum / float64(k)
}

// StepTimeAt implements policy.LinkSpeedProfile.
func (m *Model) StepTimeAt(shape []int, bottleneckGbps float64) float64 {
	t := m.StepTime(shape)
	nodes := 0
	for _, g := range shape {
		if g > 0 {
			nodes++
		}
	}
	if !(t > 0) || nodes < 2 || !(bottleneckGbps > 0) {
		return t
	}
	g := m.GradientBytes()
	t += RingAllReduceSeconds(nodes, g, bottleneckGbps) - RingAllReduceSeconds(nodes, g, RefLinkGbps)
	return max(t, m.step["1"]-m.sync["1"])
}
