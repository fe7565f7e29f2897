package driver

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/plugins/drivers"
)

// runAndRead starts task, waits for it, and returns its KEY=VALUE lines.
func (td *testDriver) runAndRead(t *testing.T, task *drivers.TaskConfig) map[string]string {
	t.Helper()
	if _, _, err := td.StartTask(task); err != nil {
		t.Fatalf("StartTask: %v", err)
	}
	if res := td.waitExit(t, task.ID); res.ExitCode != 0 {
		t.Fatalf("exit %+v; stdout %v", res, stdoutEnv(t, task))
	}
	return stdoutEnv(t, task)
}

// An isolated task runs as nobody in its own chroot: it cannot read the
// host's files or /root, see another allocation's dir or the host's
// processes, or write outside its task, alloc and checkpoint dirs.
func TestIsolation_TaskSeesOnlyItsChroot(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 1))
	other := td.newRejectedTask(t, "other", TaskConfig{}) // only its alloc dir is needed
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("host data"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `probe() { if eval "$2" >/dev/null 2>&1; then echo "$1=yes"; else echo "$1=no"; fi; }
echo "UID=$(id -u)"
probe READ_ROOT 'ls /root'
probe READ_HOST 'cat ` + secret + `'
probe SEE_OTHER_ALLOC 'ls ` + other.AllocDir + `'
echo "PROCS=$(ls /proc | grep -c '^[0-9][0-9]*$')"
probe PID1_IS_SELF 'grep -q probe /proc/1/cmdline'
probe WRITE_USR 'touch /usr/caravan-probe'
probe WRITE_ETC 'touch /etc/caravan-probe'
probe WRITE_BIN 'touch /bin/caravan-probe'
probe WRITE_CKPT 'touch /caravan/checkpoint/probe'
probe WRITE_ALLOC 'touch /alloc/probe'
probe WRITE_LOCAL 'touch /local/probe'
probe WRITE_TMP 'touch /tmp/probe'
probe NVIDIA_NODES 'ls /dev/nvidia*'
echo END_OF_ENV`
	env := td.runAndRead(t, td.newTask(t, "confined", script, TaskConfig{}))
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody on this host")
	}
	want := map[string]string{
		"UID": nobody.Uid, "READ_ROOT": "no", "READ_HOST": "no", "SEE_OTHER_ALLOC": "no",
		"WRITE_USR": "no", "WRITE_ETC": "no", "WRITE_BIN": "no",
		"WRITE_CKPT": "yes", "WRITE_ALLOC": "yes", "WRITE_LOCAL": "yes", "WRITE_TMP": "yes",
		"NVIDIA_NODES": "no", "PID1_IS_SELF": "yes",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	// Private PID namespace: the shell, the $(...) subshell, ls and grep.
	if n, err := strconv.Atoi(env["PROCS"]); err != nil || n < 1 || n > 4 {
		t.Errorf("task sees %s processes, want its own few (private PID namespace)", env["PROCS"])
	}
}

// Debian's /usr/bin/python3 runs in the default chroot, by full path and
// by bare name.
func TestIsolation_PythonRuns(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3 on this host")
	}
	td := newTestDriver(t, simConfig(t.TempDir(), 1))
	for _, cmd := range []string{"/usr/bin/python3", "python3"} {
		task := td.newTask(t, "py", "", TaskConfig{})
		tc := TaskConfig{Command: cmd, Args: []string{"-c", "import os, json; print('PY_UID=%d' % os.getuid()); print('END_OF_ENV')"}}
		if err := task.EncodeConcreteDriverConfig(&tc); err != nil {
			t.Fatal(err)
		}
		if env := td.runAndRead(t, task); env["PY_UID"] == "" || env["PY_UID"] == "0" {
			t.Errorf("%s: PY_UID = %q, want a non-root uid", cmd, env["PY_UID"])
		}
	}
}

// Root is refused with a message naming the fix, unless allow_root; a
// denied user is refused whatever.
func TestIsolation_UserPolicy(t *testing.T) {
	td := newTestDriver(t, simConfig(t.TempDir(), 1))
	root := td.newRejectedTask(t, "root", TaskConfig{})
	root.User = "root"
	_, _, err := td.StartTask(root)
	if err == nil || !strings.Contains(err.Error(), "allow_root = true") {
		t.Fatalf("user root: got %v, want a refusal naming allow_root", err)
	}

	conf := simConfig(t.TempDir(), 1)
	conf.AllowRoot = true
	conf.DeniedUsers = []string{"daemon"}
	allowed := newTestDriver(t, conf)
	denied := allowed.newRejectedTask(t, "daemon", TaskConfig{})
	denied.User = "daemon"
	if _, _, err := allowed.StartTask(denied); err == nil || !strings.Contains(err.Error(), "denied_users") {
		t.Fatalf("denied user: got %v", err)
	}
	task := allowed.newTask(t, "root", `echo "UID=$(id -u)"; echo END_OF_ENV`, TaskConfig{})
	task.User = "root"
	_, _, err = allowed.StartTask(task)
	if err != nil && strings.Contains(err.Error(), "can't apply capabilities") {
		// Nomad's executor gives root its legacy capability set, which a
		// host with a narrower bounding set (a container) cannot grant:
		// exec's root tasks fail there the same way.
		t.Skipf("this host cannot start root tasks through Nomad's executor: %v", err)
	}
	if err != nil {
		t.Fatalf("allow_root: %v", err)
	}
	allowed.waitExit(t, task.ID)
	if env := stdoutEnv(t, task); env["UID"] != "0" {
		t.Errorf("allow_root: UID = %q, want 0", env["UID"])
	}
}

// With no_isolation the fingerprint and health description say so, and
// the task sees host paths.
func TestNoIsolation_Reported(t *testing.T) {
	conf := simConfig(t.TempDir(), 1)
	conf.NoIsolation = true
	conf.AllowRoot = true // the harness' alloc dirs are private to root
	td := newTestDriver(t, conf)
	fp := td.fingerprint(t)
	if got := fp.Attributes["driver.caravan.isolation"]; got == nil || *got.String != "none" {
		t.Errorf("driver.caravan.isolation = %v, want none", got)
	}
	if !strings.Contains(fp.HealthDescription, "NO ISOLATION") {
		t.Errorf("health description %q does not warn about no_isolation", fp.HealthDescription)
	}
	caps, _ := td.impl.Capabilities()
	if caps.FSIsolation != "none" {
		t.Errorf("FSIsolation = %q, want none", caps.FSIsolation)
	}
	task := td.newTask(t, "raw", `echo "CKPT=$CARAVAN_CHECKPOINT_DIR"; echo END_OF_ENV`, TaskConfig{})
	task.User = "root"
	if env := td.runAndRead(t, task); env["CKPT"] != td.hostCheckpoint(task, 1) {
		t.Errorf("CKPT = %q, want the host path %q", env["CKPT"], td.hostCheckpoint(task, 1))
	}

	iso := newTestDriver(t, simConfig(t.TempDir(), 1))
	if got := iso.fingerprint(t).Attributes["driver.caravan.isolation"]; got == nil || *got.String != "chroot" {
		t.Errorf("default driver.caravan.isolation = %v, want chroot", got)
	}
}
