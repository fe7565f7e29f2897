package consumer

import "syscall"

// oDirect bypasses the page cache for the backup file and the benchmark's
// disk file.
const oDirect = syscall.O_DIRECT

// oDSync makes each write wait for the device (the benchmark's synced disk).
const oDSync = syscall.O_DSYNC
