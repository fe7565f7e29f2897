package live

import "time"

// preemptStartGrace bounds how long a preemption waits for a just-admitted
// job's tasks to start (see startingTask); past it, a start that hangs is
// stopped anyway.
const preemptStartGrace = 30 * time.Second

// startingTask reports whether preempting e now would stop a task that is
// still being set up on its client. Nomad then records the kill ("Sent
// interrupt") before the driver has a process to signal; the task starts
// regardless, never sees its kill signal, and holds its GPU until
// kill_timeout ends in SIGKILL, without a clean checkpoint. Measured in the
// preemption-heavy replay (e2e/scheduler): 15 s of real time per such
// preemption instead of ~0.15 s. Waiting until its tasks run costs a
// fraction of a second, and the policy decides again at the round their
// start wakes (the preempting job waits meanwhile: its GPUs are still held).
func startingTask(e *entry, now time.Time) bool {
	return e.allocs.starting > 0 && unix(now)-e.rec.LastStart < preemptStartGrace.Seconds()
}
