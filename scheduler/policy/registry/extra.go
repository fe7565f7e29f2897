package registry

import (
	"errors"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/place"
)

// extraPlacements are placements that need something the zero Config
// lacks, so they are not in Names() (every listed name must build from
// the zero Config, and the golden digests pin exactly those).
var extraPlacements = map[string]func(Config) (policy.Placer, error){
	// Horus with a bound on pairwise slowdown (Config.Interference.Pairs,
	// e.g. colocate.PlacementPairs; bound SlowdownBound, default 1.5).
	"interference-bounded": func(c Config) (policy.Placer, error) {
		if c.Interference.Pairs == nil {
			return nil, errors.New("interference-bounded needs a pair-slowdown predictor (Config.Interference.Pairs)")
		}
		return place.NewInterference(c.Interference), nil
	},
}

// ExtraPlacements lists placements that build only with extra
// configuration (see extraPlacements).
func ExtraPlacements() []string { return sortedKeys(extraPlacements) }
