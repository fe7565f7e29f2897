//go:build !windows

package driver

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
)

// chownForUser hands the task's files to the task's user so a task run as
// user = "..." can write its checkpoints and progress.
func chownForUser(name string, paths ...string) error {
	if name == "" || os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("task user %q: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, p := range paths {
		if err := os.Chown(p, uid, gid); err != nil {
			return fmt.Errorf("handing %s to user %q: %w", p, name, err)
		}
	}
	return nil
}
