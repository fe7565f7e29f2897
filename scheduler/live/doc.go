// Package live is Caravan's live scheduler: it steers a real Nomad cluster
// by rewriting jobs (docs/architecture.md). `caravan scheduler` and
// `caravan queue` (cmd/caravan) parse flags into a Config and call New,
// Serve and QueueClient; this package parses no flags.
//
// Users submit jobs into the node pool "caravan-queue", which has no nodes,
// so Nomad holds them. The scheduler watches Nomad's event stream, asks a
// pure policy (scheduler/policy) what should run, and then:
//
//   - admits a job by rewriting it, with check-and-set on its
//     JobModifyIndex, into its real node pool (job meta "caravan.pool",
//     default "default") with every worker pinned to the node and GPU the
//     policy chose: a ${node.unique.id} constraint per group and gpu_uuids
//     (plus gpu_fraction/gpu_memory) in the caravan task's config;
//   - preempts a job by rewriting it back to the queue pool (CAS) and
//     stopping its allocations, so its tasks get their kill signal and
//     kill_timeout to checkpoint into $CARAVAN_CHECKPOINT_DIR; admitting it
//     again resumes it from there;
//   - parks a job still queued after Config.ParkAfter (park.go; the writes
//     run beside the rounds, beside.go): rewrites it (CAS) into its real pool behind a job constraint no node meets
//     (${meta.caravan_parked} is_set, meta "caravan.parked"), so Nomad's
//     blocked evaluation marks the node classes ineligible and stops
//     re-running on every ended allocation, as it did for a job in the
//     node-less queue pool. A parked job is queued for every stage here
//     (phaseOf, managed); eligibility ignores the constraint, and
//     admission and requeue drop it.
//
// # Gang unit
//
// A worker is a task group holding exactly one caravan task that asks for
// a GPU (gpus = 1 or gpu_fraction); a group with count = N is N workers,
// split into N groups at admission. A job's gang is all its workers; they
// are admitted together in one job rewrite, so Nomad places all of them
// or, if the policy has not chosen, none. Each learns its rank and the
// gang's rendezvous (torchrun's variables). Groups without a GPU ask ride
// along into the real pool unpinned. All workers of a gang must ask for
// the same share (policy.Job has one per-worker shape).
//
// # Reading order
//
// One scheduling round is a pipeline, one file per stage:
//
//	Serve (serve.go)        HTTP API beside Run
//	Run   (leader.go)       campaign for the lock; lead: loop on events and quanta;
//	                        feed.go follows the event stream beside the loop
//	round (round.go)        one pass of the stages below
//	  observe  (observe.go)   bring the mirror of Nomad's jobs, allocations,
//	                          pools and nodes (mirror.go) up to date: apply
//	                          the events feed.go received (events.go), or
//	                          read everything afresh (reconcile.go)
//	  classify (classify.go)  each job's phase and outcome (outcome.go);
//	                          accrue service (state.go); group jobs by the
//	                          nodes they may use (class.go, eligible.go);
//	                          incremental.go keeps entries, policy views and
//	                          classes across rounds and rebuilds only what
//	                          changed, with a full round as the safety net
//	  per class of jobs:
//	    snapshot (snapshot.go)  the policy's view; GPUs committed (gpubook.go),
//	                            links measured by gossip (gossiplinks.go)
//	    decide   (round.go)     policy.Decide once; the Decision carries the ranking
//	    apply    (apply.go)     preempt, then admit what really fits
//	    rewrite  (rewrite.go)   the job edits admit and preempt write, with the
//	                            gang's rendezvous (rendezvous.go); CAS in nomadops.go
//	  park     (park.go)      park the jobs queued past Config.ParkAfter
//	  save     (round.go)     state to the Variable (store.go)
//
// Before the classes, admitted jobs Nomad left unplaced go back to the
// queue (unplaced.go).
//
// Beside the round: gang.go reads a job's workers (validating task configs
// with driver/taskspec), placement.go maps the policy's slots onto them,
// nodes.go reads GPU fingerprints, view.go and http.go serve the queue,
// metrics.go the Prometheus series, progress_poll.go reads progress files
// in the background and progress_parse.go parses them, client.go is the
// queue client.
//
// # State
//
// Nomad is the source of truth for what is admitted (job meta
// "caravan.admitted" and "caravan.placement"). The scheduler's own
// bookkeeping (attained service, executed time, preemptions, queued-since,
// recent decisions) lives in the Nomad Variable caravan/scheduler/state, so
// a restarted scheduler loses nothing and, because admissions are read back
// from Nomad, starts nothing twice. Instances elect a leader with a Nomad
// Variables lock on caravan/scheduler/lock; the others stand by.
package live
