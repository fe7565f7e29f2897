// Package sim is Caravan's discrete-event, trace-driven simulator. It
// replays jobs against a simulated cluster and asks a policy.Policy — the
// same code the live scheduler runs — what to do at every arrival,
// completion and scheduling quantum. Placement and sharing change how fast
// jobs run (scheduler/profile), so policies are judged on the physics they
// would face, not only on queueing.
//
// Time model. A job carries Work: seconds of training at speed 1, which is
// its recorded duration on a consolidated placement of the GPUs it asked
// for. While running it progresses at speed = 1 / (placement slowdown ×
// interference factor) (× elastic scaling when a policy gives it another
// worker count). Between events speeds are constant, so completions are
// computed exactly, not stepped.
package sim
