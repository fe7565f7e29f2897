//go:build !windows

package driver

import (
	"fmt"
	"os"
)

// chownTo hands the task's files to its user so it can write its
// checkpoints and progress. Without root there is no one else to hand to.
func chownTo(u *taskUser, paths ...string) error {
	if u == nil || os.Geteuid() != 0 {
		return nil
	}
	for _, p := range paths {
		if err := os.Lchown(p, u.UID, u.GID); err != nil {
			return fmt.Errorf("handing %s to user %q: %w", p, u.Name, err)
		}
	}
	return nil
}
