// Package taskspec validates the config block of a task using
// driver = "caravan". The driver (when a task starts) and the live
// scheduler (when it reads a queued job) both call it, so they agree on
// what is valid, and every error names the field and quotes the value.
//
// Fields lists every config key; a key the driver's schema gains must be
// added here too (driver/taskspec_sync_test.go checks).
package taskspec
