package driver

import (
	"fmt"
	"os/user"
	"slices"
	"strconv"
)

// taskUser is the account a task runs as, resolved on the host.
type taskUser struct {
	Name     string
	UID, GID int
}

// resolveTaskUser applies the user policy: a task without `user` runs as
// default_user; a denied user, or uid 0 without allow_root, is refused
// with a message that tells the job's author and the operator what to do.
func (c IsolationConfig) resolveTaskUser(requested string) (taskUser, error) {
	name := requested
	if name == "" {
		name = c.DefaultUser
	}
	if slices.Contains(c.DeniedUsers, name) {
		return taskUser{}, fmt.Errorf("user: %q is in this node's denied_users; run the task as another user", name)
	}
	u, err := user.Lookup(name)
	if err != nil {
		return taskUser{}, fmt.Errorf("user: %q does not exist on this node: %v", name, err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return taskUser{}, fmt.Errorf("user: %q has a non-numeric uid %q", name, u.Uid)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return taskUser{}, fmt.Errorf("user: %q has a non-numeric gid %q", name, u.Gid)
	}
	if slices.Contains(c.DeniedUsers, u.Username) {
		return taskUser{}, fmt.Errorf("user: %q (%s) is in this node's denied_users", name, u.Username)
	}
	if uid == 0 && !c.AllowRoot {
		return taskUser{}, fmt.Errorf("user: %q is root (uid 0), which the caravan driver refuses on this node; "+
			"remove user from the task (it then runs as %q) or ask the operator to set allow_root = true", name, c.DefaultUser)
	}
	return taskUser{Name: u.Username, UID: uid, GID: gid}, nil
}
