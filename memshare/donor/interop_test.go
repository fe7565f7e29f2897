package donor

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/memshare"
)

// Debian's NBD clients attach to a leased slab by its token: nbdcopy
// writes, qemu-img reads back; a forged token is refused.
func TestInteropDonor(t *testing.T) {
	for _, n := range []string{"nbdinfo", "nbdcopy", "qemu-img"} {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not installed (apt-get install libnbd-bin qemu-utils)", n)
		}
	}
	d := startDonor(t, Config{CapacityBytes: 4 << 20})
	l, err := memshare.NewAPIClient(d.Info().APIAddr, testKey, nil).Grant(context.Background(), "interop")
	if err != nil {
		t.Fatal(err)
	}
	uri := "nbd://" + d.Info().NBDAddr + "/" + l.Token
	dir := t.TempDir()
	src, back := filepath.Join(dir, "src"), filepath.Join(dir, "back")
	data := bytes.Repeat([]byte("donated memory "), (1<<20)/15+1)[:1<<20]
	os.WriteFile(src, data, 0o600)
	if out, err := exec.Command("nbdcopy", src, uri).CombinedOutput(); err != nil {
		t.Fatalf("nbdcopy: %v\n%s", err, out)
	}
	if out, err := exec.Command("qemu-img", "convert", "-f", "raw", "-O", "raw", uri, back).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(back); !bytes.Equal(got, data) {
		t.Fatal("qemu-img read back different data")
	}
	forged := "nbd://" + d.Info().NBDAddr + "/" + l.Token[:len(l.Token)-3] + "xyz"
	out, err := exec.Command("nbdinfo", forged).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "server replied with error") {
		t.Fatalf("nbdinfo with a forged token: %v\n%s", err, out)
	}
}
