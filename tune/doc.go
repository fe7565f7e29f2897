// Package tune is Caravan's hyperparameter tuner (Fluid, MLSys'21): an HCL
// tuning spec (search space, algorithm, budget, metric), the tuning
// algorithms as pure, seeded state machines (random, grid, synchronous
// successive halving, ASHA, Hyperband), a tuning-workload simulator that
// measures Fluid's water-filling against one trial per GPU, and the live
// controller that dispatches trials as Nomad jobs.
package tune
