//go:build !linux

package consumer

import "os"

// oDirect is 0 where the platform has no O_DIRECT (the file is cached).
const oDirect = 0

// oDSync makes each write wait for the device (the benchmark's synced disk).
const oDSync = os.O_SYNC
