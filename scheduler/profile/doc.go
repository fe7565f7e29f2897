// Package profile loads the measured model profiles in
// traces/model-profiles (Pollux/Sia measurements) and turns them into the
// simulator's physics: how fast a model steps on a given placement shape,
// how much co-located fractional jobs slow each other, and what
// convergence curve a job reports as it progresses.
package profile
