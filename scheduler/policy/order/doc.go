// Package order holds Caravan's orderings (the Orderer extension point):
// FIFO, SRTF with an oracle, Tiresias' 2D-LAS and 2D-Gittins, and
// finish-time fairness. Each ranks the active jobs of a snapshot; the
// policy.Framework turns the ranking into starts and preemptions.
package order
