// Package aggsvc is Caravan's shared gradient-aggregation service: many
// training jobs push gradient partitions keyed by (job, step, partition) over
// a framed, authenticated TCP protocol; when every worker of a job has pushed
// a partition, all of them receive its sum (or mean). The summation of all
// jobs time-shares one bounded pool of cores through a weighted fair
// scheduler, so a bursty job cannot starve another (Gu's thesis: pack many
// jobs' aggregation onto few CPUs). See README.md for the protocol, security
// model and failure semantics.
package aggsvc
