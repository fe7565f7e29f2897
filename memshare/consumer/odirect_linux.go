package consumer

import "syscall"

// oDirect bypasses the page cache for the backup file and the benchmark's
// disk file.
const oDirect = syscall.O_DIRECT
