//go:build windows

package driver

// chownTo is a no-op: Windows tasks run as the agent's user.
func chownTo(*taskUser, ...string) error { return nil }
