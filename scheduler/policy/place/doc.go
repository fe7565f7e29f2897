// Package place holds Caravan's placements (the Placer extension point):
// consolidated, network-aware (Liquid; profile-guided shapes when a job
// has a speed profile), interference-aware (Horus) and fragmentation-aware
// (FGD). Each chooses slots for a whole gang on the free capacity of a
// policy.Capacity, or says why it cannot.
package place
