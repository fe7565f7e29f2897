package driver

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/memshare/consumer"
	"github.com/caravan-dl/caravan/memshare/donor"
	"github.com/caravan-dl/caravan/memshare/nbd"
	"github.com/hashicorp/nomad/plugins/drivers"
)

// A consumer task's remote memory survives a plugin restart: data written
// through its endpoint, the plugin gone (endpoint closed, nothing given
// back), a new driver instance recovering the task from its handle
// serves the same URI on the same leases, and every byte reads back.
func TestRemoteMemory_SurvivesPluginRestart(t *testing.T) {
	ds, infos := startKillableDonors(t, 4)
	conf := memshareConfig(t, infos)
	handle, task, uri, want := startAndFill(t, conf)
	used := usedBy(ds)

	second := newTestDriver(t, conf)
	if err := second.RecoverTask(handle); err != nil {
		t.Fatalf("RecoverTask: %v", err)
	}
	if got := readAll(t, uri); sha256.Sum256(got) != want {
		t.Fatal("data read after the plugin restart differs from what was written")
	}
	if got := usedBy(ds); got != used {
		t.Fatalf("donors lend %d bytes after recovery, %d before: the volume did not keep its leases", got, used)
	}
	finishTask(t, second, task, ds)
}

// A donor dies while the plugin is down: its lease cannot be renewed, so
// the recovered volume rebuilds those slabs from parity on another donor
// and reads back every byte.
func TestRemoteMemory_RestartRebuildsLostLease(t *testing.T) {
	ds, infos := startKillableDonors(t, 5)
	conf := memshareConfig(t, infos)
	handle, task, uri, want := startAndFill(t, conf)
	victim := -1
	for i, d := range ds {
		if d.Status().Used > 0 {
			victim = i
			break
		}
	}
	ds[victim].Close()

	second := newTestDriver(t, conf)
	if err := second.RecoverTask(handle); err != nil {
		t.Fatalf("RecoverTask: %v", err)
	}
	if got := readAll(t, uri); sha256.Sum256(got) != want {
		t.Fatal("data read after the restart and a lost donor differs from what was written")
	}
	path := layoutPath(conf.StateDir, task.ID)
	deadline := time.Now().Add(30 * time.Second)
	for !layoutHealthy(t, path, conf.Memshare.Key, task.ID, infos[victim].Node) {
		if time.Now().After(deadline) {
			t.Fatal("the dead donor's slabs were never re-homed in the saved layout")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := readAll(t, uri); sha256.Sum256(got) != want {
		t.Fatal("data differs after re-homing")
	}
	finishTask(t, second, task, append(ds[:victim:victim], ds[victim+1:]...))
}

// A layout file edited by anyone without the key is refused.
func TestLayoutFileAuthenticated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memshare", "t1.layout")
	l := consumer.Layout{Version: consumer.LayoutVersion, ID: "a/b", Size: 4096}
	if _, err := writeLayout(path, []byte(testMemshareKey), "t1", l); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("layout file mode %v %v, want 0600", fi.Mode(), err)
	}
	if got, err := readLayout(path, []byte(testMemshareKey), "t1"); err != nil || got.ID != "a/b" {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	raw, _ := os.ReadFile(path)
	for name, c := range map[string]struct {
		raw        string
		key, task  string
		wantInText string
	}{
		"edited":     {strings.Replace(string(raw), `"size":4096`, `"size":8192`, 1), testMemshareKey, "t1", "mac"},
		"other key":  {string(raw), "another-memshare-key-xyz", "t1", "mac"},
		"other task": {string(raw), testMemshareKey, "t2", "task"},
		"garbage":    {"{not json", testMemshareKey, "t1", "layout file"},
		"version":    {strings.Replace(string(raw), `"version":1,"task"`, `"version":9,"task"`, 1), testMemshareKey, "t1", "version"},
	} {
		if _, err := parseLayout([]byte(c.raw), []byte(c.key), c.task); err == nil || !strings.Contains(err.Error(), c.wantInText) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

// startKillableDonors is startTestDonors keeping the donors.
func startKillableDonors(t *testing.T, n int) ([]*donor.Donor, []MemshareDonor) {
	t.Helper()
	var ds []*donor.Donor
	var infos []MemshareDonor
	for i := range n {
		d, err := donor.New(donor.Config{Node: "donor" + string(rune('a'+i)), Key: []byte(testMemshareKey), SlabSize: 1 << 20, CapacityBytes: 16 << 20})
		if err != nil {
			t.Fatal(err)
		}
		nl, _ := net.Listen("tcp", "127.0.0.1:0")
		al, _ := net.Listen("tcp", "127.0.0.1:0")
		d.Start(nl, al)
		t.Cleanup(func() { d.Close() })
		info := d.Info()
		ds = append(ds, d)
		infos = append(infos, MemshareDonor{Node: info.Node, NBDAddr: info.NBDAddr, APIAddr: info.APIAddr})
	}
	return ds, infos
}

// startAndFill starts a remote_memory task under a first driver, fills
// its 6 MiB through the endpoint, and makes that driver vanish as a
// killed plugin does. It returns the handle, the task, its URI and the
// data's checksum.
func startAndFill(t *testing.T, conf Config) (handle *drivers.TaskHandle, task *drivers.TaskConfig, uri string, sum [32]byte) {
	t.Helper()
	first := newTestDriver(t, conf)
	task = first.newTask(t, "rm", `env; echo END_OF_ENV; while [ ! -f "$NOMAD_TASK_DIR/go" ]; do sleep 0.1; done`,
		TaskConfig{RemoteMemory: "6MiB"})
	handle, _, err := first.StartTask(task)
	if err != nil {
		t.Fatal(err)
	}
	uri = stdoutEnv(t, task)["CARAVAN_REMOTE_MEMORY_URI"]
	data := make([]byte, 6<<20)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	c := dialURI(t, uri)
	for off := 0; off < len(data); off += 1 << 20 {
		if err := c.WriteAt(data[off:off+1<<20], uint64(off)); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	first.impl.mem.abandonAll() // the plugin process dies: nothing is given back
	first.impl.cancel()
	return handle, task, uri, sha256.Sum256(data)
}

func dialURI(t *testing.T, uri string) *nbd.Client {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatalf("uri %q: %v", uri, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := nbd.Dial(ctx, "tcp", u.Host, nbd.ClientOptions{Export: strings.TrimPrefix(u.Path, "/")})
	if err != nil {
		t.Fatalf("dial %s: %v", uri, err)
	}
	return c
}

func readAll(t *testing.T, uri string) []byte {
	t.Helper()
	c := dialURI(t, uri)
	defer c.Close()
	out := make([]byte, c.Size())
	for off := 0; off < len(out); off += 1 << 20 {
		if err := c.ReadAt(out[off:min(off+1<<20, len(out))], uint64(off)); err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
	}
	return out
}

func usedBy(ds []*donor.Donor) int64 {
	var sum int64
	for _, d := range ds {
		sum += d.Status().Used
	}
	return sum
}

// layoutHealthy reads the saved layout: no slab dead, none on node.
func layoutHealthy(t *testing.T, path, key, task, node string) bool {
	l, err := readLayout(path, []byte(key), task)
	if err != nil {
		t.Fatalf("saved layout: %v", err)
	}
	for _, st := range l.Stripes {
		for _, sl := range st.Slots {
			if sl.Dead || sl.Lost || sl.Donor.Node == node {
				return false
			}
		}
	}
	return true
}

// finishTask lets the task exit and checks its leases go back.
func finishTask(t *testing.T, td *testDriver, task *drivers.TaskConfig, ds []*donor.Donor) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(task.TaskDir().LocalDir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := td.waitExit(t, task.ID); res.ExitCode != 0 {
		t.Fatalf("task exit %+v", res)
	}
	deadline := time.Now().Add(10 * time.Second)
	for usedBy(ds) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("leases not returned after the recovered task exited: %d bytes", usedBy(ds))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(layoutPath(td.impl.config.StateDir, task.ID)); !os.IsNotExist(err) {
		t.Fatalf("the saved layout must go with the task: %v", err)
	}
	_ = td.DestroyTask(task.ID, true)
}

// FuzzParseLayout: any bytes give a layout or an error, never a panic,
// and only a correctly signed file is accepted.
func FuzzParseLayout(f *testing.F) {
	key := []byte(testMemshareKey)
	good, _ := writeLayout(filepath.Join(f.TempDir(), "seed.layout"), key, "t1", consumer.Layout{Version: consumer.LayoutVersion, ID: "a/b"})
	f.Add([]byte(`{"version":1,"task":"t1","layout":` + string(good) + `,"mac":"` + layoutMAC(key, "t1", good) + `"}`))
	f.Add([]byte(`{"version":1,"task":"t1","layout":{},"mac":"00"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		l, err := parseLayout(raw, key, "t1")
		if err != nil {
			return
		}
		var lf layoutFile
		if json.Unmarshal(raw, &lf) != nil || lf.MAC != layoutMAC(key, "t1", lf.Layout) {
			t.Fatalf("accepted an unsigned layout %+v", l)
		}
	})
}

// A task gone at recovery leaves no layout behind; a path that is not a
// layout of that task is never removed.
func TestDropMemshareRemovesOnlyItsLayout(t *testing.T) {
	dir := t.TempDir()
	mine, other := layoutPath(dir, "t1"), filepath.Join(dir, "memshare", "precious")
	for _, p := range []string{mine, other} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	st := func(path string) taskState {
		return taskState{TaskConfig: &drivers.TaskConfig{ID: "t1"}, Memshare: &memshareTaskState{Endpoint: &endpointState{Layout: path}}}
	}
	dropMemshare(st(other))
	dropMemshare(st(mine))
	if _, err := os.Stat(mine); !os.IsNotExist(err) {
		t.Fatalf("the task's layout is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("another file was removed: %v", err)
	}
}
