// Package serve is Caravan's inference front end with per-request deadlines,
// after Orloj (Yu et al., MLSys'23): requests carry a deadline (their own or
// their model's SLO), wait in per-model queues, and a batch scheduler decides
// which requests form the next batch and when it goes to a model worker.
//
// Execution time is modelled as an empirical distribution per batch size and
// input features (input and output length buckets), updated online from the
// latencies the workers measure. The Orloj policy batches and orders requests
// by their probability of meeting their deadlines; FIFO with a fixed batch
// size and a Clockwork-style policy (one latency estimate per batch size,
// earliest deadline first, drop when late) are baselines in the same code.
//
// A request that can no longer meet its deadline is answered early with a
// clear status; one whose result arrives after its deadline is answered
// "deadline_exceeded" at the deadline and never counts as met.
//
// Policies are pure (policy.go): the live dispatcher (dispatch.go) and the
// trace-driven simulator (sim.go) run the same code.
package serve
