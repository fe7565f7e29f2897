package nodesim

import (
	"os"
	"strings"
	"testing"

	"github.com/shirou/gopsutil/v3/disk"
)

func TestMountOfPicksTheDeepestMountHoldingTheDir(t *testing.T) {
	table := strings.Join([]string{
		"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
		"30 22 0:26 / /work rw,relatime shared:2 - ext4 /dev/sdb1 rw",
		"31 22 0:27 / /workspace rw,relatime shared:3 - tmpfs tmpfs rw",
		"short line",
	}, "\n")
	for dir, want := range map[string]string{"/work/main/sim": "/work", "/work": "/work", "/workspace/x": "/workspace", "/tmp/x": "/"} {
		line, err := mountOf(table, dir)
		if err != nil || strings.Fields(line)[4] != want {
			t.Errorf("mountOf(%s) = %q, %v; want the mount at %s", dir, line, err, want)
		}
	}
	if _, err := mountOf("", "/x"); err == nil {
		t.Error("an empty table gave a mount")
	}
}

// The simulated clients' host statistics list one filesystem, the one
// holding the set's directory, until the set is shut down.
func TestNarrowMountsListsOneFilesystemUntilRestored(t *testing.T) {
	t.Setenv(mountInfoEnv, "")
	dir := t.TempDir()
	file, err := narrowMounts(dir)
	if err != nil || file == "" || os.Getenv(mountInfoEnv) != file {
		t.Fatalf("narrowMounts: %q, %v (env %q)", file, err, os.Getenv(mountInfoEnv))
	}
	parts, err := disk.Partitions(false)
	if err != nil || len(parts) > 1 {
		t.Fatalf("partitions after narrowing: %v, %v; want at most one", parts, err)
	}
	if again, err := narrowMounts(t.TempDir()); again != "" || err != nil || os.Getenv(mountInfoEnv) != file {
		t.Fatalf("a second set replaced the first one's table: %q, %v", again, err)
	}
	restoreMounts(file)
	if v := os.Getenv(mountInfoEnv); v != "" {
		t.Fatalf("after restore the override is %q", v)
	}
}
