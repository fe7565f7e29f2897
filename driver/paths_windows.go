//go:build windows

package driver

// chownForUser is a no-op: Windows tasks run as the agent's user.
func chownForUser(string, ...string) error { return nil }
