package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/caravan-dl/caravan/e2e/harness"
)

// gpuProbe lists the NVIDIA nodes a task sees and how opening each ends;
// without the NVIDIA kernel module an open the device cgroup allows fails
// with "No such device or address".
const gpuProbe = `for f in /dev/nvidia*; do [ -e "$f" ] || continue
  if err=$( (: <"$f") 2>&1); then r=ok; else r=$(echo "$err" | sed 's/.*: //'); fi
  echo "NODE_$(basename "$f" | tr - _)=$r"
done; echo DONE=1`

// On a real agent whose driver reads /dev/nvidia* stand-ins (made with
// mknod), a task granted GPU 1 sees and may open only that GPU's node and
// the control nodes; a task without GPUs sees none.
func TestIsolatedTaskSeesOnlyItsGPUNode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making device nodes needs root")
	}
	dev := t.TempDir()
	nodes := map[string]uint64{"nvidia0": unix.Mkdev(195, 0), "nvidia1": unix.Mkdev(195, 1),
		"nvidiactl": unix.Mkdev(195, 255), "nvidia-uvm": unix.Mkdev(235, 0)}
	for name, d := range nodes {
		if err := unix.Mknod(filepath.Join(dev, name), unix.S_IFCHR|0o666, int(d)); err != nil {
			t.Skipf("cannot mknod here: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := harness.Start(ctx, harness.Options{
		GPUs:         harness.GPUs{Model: "Simulated A100 40GB", MemoryMiB: 40960, Count: 2},
		PluginConfig: fmt.Sprintf("device_dir = %q", dev),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Stop(); err != nil {
			t.Log(err)
		}
		if !t.Failed() {
			os.RemoveAll(c.Dir)
		}
	}()
	nodesList, _, err := c.API.Nodes().List(nil)
	if err != nil || len(nodesList) != 1 {
		t.Fatalf("nodes %v err %v", nodesList, err)
	}
	node, _, err := c.API.Nodes().Info(nodesList[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	uuid1 := node.Attributes["driver.caravan.gpu.1.uuid"]
	enxio := "No such device or address"
	cases := []struct {
		id, config string
		want       map[string]string
	}{
		{"gpu-one", fmt.Sprintf(`gpus = 1
        gpu_uuids = [%q]`, uuid1), map[string]string{"NODE_nvidia1": enxio, "NODE_nvidiactl": enxio, "NODE_nvidia_uvm": enxio}},
		{"gpu-none", ``, map[string]string{}},
	}
	for _, tc := range cases {
		hcl := batchJob(tc.id, "", fmt.Sprintf(`command = "/bin/sh"
        args = ["-c", %q]
        %s`, gpuProbe, tc.config))
		if _, err := c.RunHCL(hcl, nil); err != nil {
			t.Fatal(err)
		}
		a, err := c.WaitAlloc(within(t, 60*time.Second), tc.id, harness.TaskState("t", "dead"))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := c.Logs(a, "t", "stdout")
		got := map[string]string{}
		for k, v := range envOf(out) {
			if len(k) > 5 && k[:5] == "NODE_" {
				got[k] = v
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s sees %v, want %v; stdout:\n%s\nevents:\n%s", tc.id, got, tc.want, out, harness.Events(a, "t"))
		}
		if err := c.StopJob(tc.id, 30*time.Second); err != nil {
			t.Error(err)
		}
	}
}
