// Package live is Caravan's live scheduler: it steers a real Nomad cluster
// by rewriting jobs, as DESIGN.md ("How the scheduler steers Nomad") says.
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
//     again resumes it from there.
//
// # Gang unit
//
// A worker is a task group with count = 1 holding exactly one caravan task
// that asks for a GPU (gpus = 1 or gpu_fraction). A job's gang is all its
// worker groups; they are admitted together in one job rewrite, so Nomad
// places all of them or, if the policy has not chosen, none. Groups without a
// GPU ask ride along into the real pool unpinned. All workers of a gang must
// ask for the same share (policy.Job has one per-worker shape).
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
