package registry

import (
	"github.com/caravan-dl/caravan/scheduler/policy/fluid"
	"github.com/caravan-dl/caravan/scheduler/policy/optimus"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
)

// Config carries every policy knob; the zero value gives each paper's
// defaults.
type Config struct {
	// FIFOBackfill lets FIFO start smaller jobs past a blocked head
	// (default off: Tiresias' YARN-CS baseline blocks head-of-line).
	FIFOBackfill bool
	// Queues configures Tiresias' queues (default 3 queues, limits
	// 3250/7200/18000 GPU·s, PromoteKnob off); see order.QueueConfig.
	Queues order.QueueConfig
	// GittinsPrior seeds 2D-Gittins' service distribution (GPU-seconds),
	// e.g. the samples of tiresias/yarn-gput1000.csv; GittinsDelta is its
	// quantum (default 3250 GPU·s).
	GittinsPrior []float64
	GittinsDelta float64
	// Fair tunes finish-time fairness (lease, remaining-time guess).
	Fair order.FairConfig
	// Lucid tunes Lucid (profiling window 80 s for jobs of ≤ 4 GPUs,
	// workload estimate model); see order.LucidConfig.
	Lucid order.LucidConfig

	// Network tunes network-aware placement; "network-aware-batch" uses
	// Network.BatchSize, default 8.
	Network place.NetworkConfig
	// Interference tunes Horus packing (threshold default 1.0, prior).
	Interference place.InterferenceConfig
	// Yarn tunes the YARN-CS placement (profile-based spread tolerance).
	Yarn place.YarnConfig
	// Frag tunes FGD (prior request-size distribution).
	Frag place.FragConfig
	// Optimus tunes Optimus (resize hysteresis, remaining-time guess).
	Optimus optimus.Config
	// Fluid tunes the fluid policy's planner (mode, pack depth, gains).
	Fluid fluid.Config
}
