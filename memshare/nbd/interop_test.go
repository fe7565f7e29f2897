package nbd

import (
	"bytes"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needTool skips when a Debian NBD client is missing (scripts/install-deps.sh
// installs libnbd-bin and qemu-utils).
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed (apt-get install libnbd-bin qemu-utils)", name)
	}
	return p
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

// Real clients against this server: nbdinfo sees the export, nbdcopy
// writes a file, qemu-img reads it back, nbdsh checks a range.
func TestInteropDebianClients(t *testing.T) {
	needTool(t, "nbdinfo")
	needTool(t, "nbdcopy")
	needTool(t, "nbdsh")
	needTool(t, "qemu-img")
	exp := &memExport{buf: make([]byte, 4<<20)}
	_, addr := startServer(t, ServerConfig{Exports: mapExports{"disk": exp}})
	uri := "nbd://" + addr + "/disk"

	if out := run(t, "nbdinfo", uri); !strings.Contains(out, "4194304") {
		t.Fatalf("nbdinfo did not report the size:\n%s", out)
	}
	if out := run(t, "nbdinfo", "--list", "nbd://"+addr); !strings.Contains(out, "disk") {
		t.Fatalf("nbdinfo --list:\n%s", out)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src.bin")
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>12)
	}
	os.WriteFile(src, data, 0o600)
	run(t, "nbdcopy", src, uri)
	if !bytes.Equal(exp.bytes(), data) {
		t.Fatal("nbdcopy's data did not land in the export")
	}
	back := filepath.Join(dir, "back.raw")
	run(t, "qemu-img", "convert", "-f", "raw", "-O", "raw", uri, back)
	got, _ := os.ReadFile(back)
	if sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatal("qemu-img read back different data")
	}
	out := run(t, "nbdsh", "-u", uri, "-c", "h.pwrite(b'hello', 100); print(h.pread(5, 100).decode())")
	if strings.TrimSpace(out) != "hello" || string(exp.bytes()[100:105]) != "hello" {
		t.Fatalf("nbdsh round trip: %q", out)
	}
}
