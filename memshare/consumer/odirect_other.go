//go:build !linux

package consumer

// oDirect is 0 where the platform has no O_DIRECT (the file is cached).
const oDirect = 0
