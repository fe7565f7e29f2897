package scheduler

import "testing"

// TestPreemptionReplayMatchesSimulator is issue 20's preemption-heavy
// live replay: preemptTrace under 2D-LAS on 2 × 2 GPUs (8 or so
// preemptions, each resumed from its checkpoint), whose live mean JCT must
// stay within 10 % of the simulator's for the same trace, cluster and
// queues, given Nomad's start and stop latencies measured in the same run
// from Nomad's timestamps (never fitted to JCTs). ~1.5 min.
func TestPreemptionReplayMatchesSimulator(t *testing.T) {
	f := preemptReplay(t, 0)
	t.Logf("live mean JCT %.1f trace s (%d preemptions); simulator %.1f, with start %.1f (of it before the tasks run %.1f) and stop %.1f: %.1f (%.1f %% off)",
		f.live, f.preemptions, f.sim, f.lat.start, f.lat.unserved, f.lat.stop, f.withLat, f.err())
	if e := f.err(); e > 10 {
		t.Fatalf("live mean JCT %.1f trace s is %.1f %% off the simulator's %.1f (start %.1f, stop %.1f measured in this run), more than 10 %%: compare the per-job timelines logged above",
			f.live, e, f.withLat, f.lat.start, f.lat.stop)
	}
}
