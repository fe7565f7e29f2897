// Package trace loads recorded GPU-cluster job traces (Microsoft Philly,
// the Tiresias simulator inputs, Alibaba GPU v2023) into one neutral Job
// form that the simulator replays. Loaders validate as they read: a bad row
// is an error naming the file and line, never a silently skipped job.
package trace
