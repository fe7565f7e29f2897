package consumer

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not installed (apt-get install libnbd-bin qemu-utils)", n)
		}
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	// nbdsh runs the python3 on PATH; Debian's nbd module is /usr/bin/python3's.
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin:"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Debian's NBD clients against the consumer endpoint, on a unix socket and
// on loopback TCP: nbdcopy writes, qemu-img and nbdsh read back, checksums
// compared; then a donor dies and the data still reads back.
func TestInteropEndpoint(t *testing.T) {
	needTools(t, "nbdinfo", "nbdcopy", "nbdsh", "qemu-img")
	c := startCluster(t, 7, 16<<20)
	v := openVolume(t, c, Config{Size: 8 << 20})
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := randBytes(rand.New(rand.NewPCG(11, 12)), int(v.Size()))
	os.WriteFile(src, data, 0o600)
	want := sha256.Sum256(data)

	unix, err := Serve(v, filepath.Join(dir, "rm.sock"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close()
	tcp, err := Serve(v, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	if out := run(t, "nbdinfo", unix.URI()); !strings.Contains(out, "8388608") {
		t.Fatalf("nbdinfo:\n%s", out)
	}
	run(t, "nbdcopy", src, unix.URI())
	back := filepath.Join(dir, "back")
	run(t, "qemu-img", "convert", "-f", "raw", "-O", "raw", tcp.URI(), back)
	got, _ := os.ReadFile(back)
	if sha256.Sum256(got) != want {
		t.Fatal("qemu-img read different data than nbdcopy wrote")
	}
	out := run(t, "nbdsh", "-u", tcp.URI(), "-c",
		"import hashlib; print(hashlib.sha256(h.pread(h.get_size(), 0)).hexdigest())")
	if strings.TrimSpace(out) != hexSum(want) {
		t.Fatalf("nbdsh checksum %s", out)
	}
	// Lose a donor: reads decode from parity.
	c.donors[c.donorOn(v.nodesOf(0)[0])].Close()
	run(t, "nbdcopy", unix.URI(), back)
	got, _ = os.ReadFile(back)
	if sha256.Sum256(got) != want {
		t.Fatal("data differs after a donor died")
	}
	// A wrong export name is refused.
	bad := strings.Replace(tcp.URI(), "caravan-", "caravan-0", 1)
	if err := exec.Command("nbdinfo", bad).Run(); err == nil {
		t.Fatal("nbdinfo attached with a wrong export name")
	}
}

func hexSum(s [32]byte) string {
	const hx = "0123456789abcdef"
	b := make([]byte, 64)
	for i, c := range s {
		b[2*i], b[2*i+1] = hx[c>>4], hx[c&15]
	}
	return string(b)
}

// nbdcopy writes through the endpoint while r donors die: it succeeds
// (every write acknowledged), and qemu-img reads back exactly its data.
func TestInteropKillDonorsDuringNbdcopy(t *testing.T) {
	needTools(t, "nbdcopy", "qemu-img")
	c := startCluster(t, 9, 32<<20)
	v := openVolume(t, c, Config{Size: 32 << 20})
	ep, err := Serve(v, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	dir := t.TempDir()
	src, back := filepath.Join(dir, "src"), filepath.Join(dir, "back")
	data := randBytes(rand.New(rand.NewPCG(21, 22)), int(v.Size()))
	os.WriteFile(src, data, 0o600)
	// Small requests, one at a time, so the copy is still running when
	// the donors die.
	cmd := exec.Command("nbdcopy", "--request-size=65536", "--requests=1", "--connections=1", src, ep.URI())
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "nbdcopy to start writing", func() bool {
		b := make([]byte, BlockSize)
		return v.ReadAt(b, 0) == nil && !bytes.Equal(b, make([]byte, BlockSize))
	})
	running := cmd.Process.Signal(syscall.Signal(0)) == nil
	for _, n := range v.nodesOf(0)[:2] { // r = 2
		c.donors[c.donorOn(n)].Close()
	}
	t.Logf("nbdcopy still running when the donors died: %v", running)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("nbdcopy failed with only r donors gone: %v\n%s", err, out)
	}
	run(t, "qemu-img", "convert", "-f", "raw", "-O", "raw", ep.URI(), back)
	got, _ := os.ReadFile(back)
	if sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatal("data read back differs from what nbdcopy wrote while donors died")
	}
}
