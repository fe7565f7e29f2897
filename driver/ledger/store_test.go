package ledger

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPersistAndReopen(t *testing.T) {
	devs := devices(1000, 2000)
	l, path := openTemp(t, devs)
	mustAdmit(t, l, "a", Request{Fraction: 0.5})
	mustAdmit(t, l, "b", Request{Fraction: 0.25, MemMiB: 100, UUID: "GPU-1"})
	if _, err := l.AdmitWhole("c", 0, []string{"GPU-1"}); err == nil {
		t.Fatal("GPU-1 is partly taken: want error")
	}
	if err := l.Release("a"); err != nil {
		t.Fatal(err)
	}
	mustAdmit(t, l, "d", Request{Fraction: 0.75})

	r, err := Open(path, devs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.All(), l.All()) || !reflect.DeepEqual(r.Usage(), l.Usage()) {
		t.Errorf("reopened ledger differs:\n got %+v\nwant %+v", r.All(), l.All())
	}
	if g := r.Grants("b"); len(g) != 1 || g[0].MemMiB != 100 || g[0].UUID != "GPU-1" {
		t.Errorf("grants(b) = %+v", g)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("state dir holds %d entries, want only the ledger (no temp files left)", len(entries))
	}
}

func TestOpenMissingFileIsEmpty(t *testing.T) {
	l, path := openTemp(t, devices(1000))
	if len(l.All()) != 0 {
		t.Fatal("new ledger not empty")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("Open created the file before any change: %v", err)
	}
}

func TestInMemoryLedger(t *testing.T) {
	l, err := Open("", devices(1000))
	if err != nil {
		t.Fatal(err)
	}
	mustAdmit(t, l, "a", Request{Fraction: 1})
	if err := l.Release("a"); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptFile(t *testing.T) {
	cases := map[string]string{
		"not json":      "{nope",
		"empty":         "",
		"wrong version": `{"version":7,"grants":[]}`,
		"unknown field": `{"version":1,"grants":[],"extra":1}`,
		"trailing":      `{"version":1,"grants":[]} {}`,
		"no task":       `{"version":1,"grants":[{"task_id":"","uuid":"GPU-0","index":0,"fraction":0.5,"mem_mib":1}]}`,
		"no uuid":       `{"version":1,"grants":[{"task_id":"a","uuid":"","index":0,"fraction":0.5,"mem_mib":1}]}`,
		"bad fraction":  `{"version":1,"grants":[{"task_id":"a","uuid":"GPU-0","index":0,"fraction":1.5,"mem_mib":1}]}`,
		"duplicate": `{"version":1,"grants":[{"task_id":"a","uuid":"GPU-0","index":0,"fraction":0.5,"mem_mib":1},` +
			`{"task_id":"a","uuid":"GPU-0","index":0,"fraction":0.5,"mem_mib":1}]}`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.json")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(path, devices(1000))
			if err == nil || !strings.Contains(err.Error(), "is corrupt") || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want a corrupt-file error naming %s", err, path)
			}
			after, _ := os.ReadFile(path)
			if string(after) != content {
				t.Error("the corrupt file was modified")
			}
		})
	}
}

func TestUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	// A directory where the file should be cannot be read as a ledger.
	if _, err := Open(dir, devices(1000)); err == nil {
		t.Error("want an error reading a directory as the ledger")
	}
}

func TestSaveFailureRollsBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	l, err := Open(filepath.Join(dir, "ledger.json"), devices(1000, 1000))
	if err != nil {
		t.Fatal(err)
	}
	keep := mustAdmit(t, l, "keep", Request{Fraction: 0.5})
	// The ledger's directory becomes a regular file, so every save fails.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Admit("a", Request{Fraction: 0.5}); err == nil || !strings.Contains(err.Error(), "ledger: save") {
		t.Errorf("admit: err = %v, want a save error", err)
	}
	if _, err := l.AdmitWhole("b", 1, nil); err == nil {
		t.Error("admit whole: want a save error")
	}
	if err := l.Release("keep"); err == nil {
		t.Error("release: want a save error")
	}
	if all := l.All(); len(all) != 1 || all[0] != keep {
		t.Errorf("grants after failed saves = %+v, want only %+v", all, keep)
	}
}

func TestStaleGrants(t *testing.T) {
	l, path := openTemp(t, devices(1000, 1000))
	mustAdmit(t, l, "a", Request{Fraction: 0.5, UUID: "GPU-0"})
	mustAdmit(t, l, "b", Request{Fraction: 0.5, UUID: "GPU-1"})

	// GPU-0 is gone after a reboot and GPU-1 is now index 0.
	now := devices(1000)
	now[0].UUID = "GPU-1"
	r, err := Open(path, now)
	if err != nil {
		t.Fatal(err)
	}
	stale := r.Stale()
	if len(stale) != 1 || stale[0].TaskID != "a" || stale[0].UUID != "GPU-0" {
		t.Errorf("stale = %+v, want task a on GPU-0", stale)
	}
	if g := r.Grants("b"); len(g) != 1 || g[0].Index != 0 {
		t.Errorf("grant b = %+v, want its index refreshed to 0", g)
	}
	if u := r.Usage(); len(u) != 1 || u[0].Tasks != 1 || u[0].UUID != "GPU-1" {
		t.Errorf("usage = %+v", u)
	}
	if err := r.Release("a"); err != nil {
		t.Fatal(err)
	}
	if len(r.Stale()) != 0 {
		t.Error("stale grant survived its release")
	}
}

func TestOpenRejectsBadDevices(t *testing.T) {
	dup := devices(1000, 1000)
	dup[1].UUID = dup[0].UUID
	if _, err := Open("", dup); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("duplicate UUID: %v", err)
	}
	noID := devices(1000)
	noID[0].UUID = ""
	if _, err := Open("", noID); err == nil || !strings.Contains(err.Error(), "no UUID") {
		t.Errorf("empty UUID: %v", err)
	}
}
