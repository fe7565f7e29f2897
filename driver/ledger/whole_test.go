package ledger

import (
	"reflect"
	"strings"
	"testing"
)

func TestAdmitWhole(t *testing.T) {
	l, _ := openTemp(t, devices(1000, 2000, 3000, 4000))
	mustAdmit(t, l, "frac", Request{Fraction: 0.1, UUID: "GPU-0"})

	gs, err := l.AdmitWhole("w", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Grant{
		{TaskID: "w", UUID: "GPU-1", Index: 1, Fraction: 1, MemMiB: 2000},
		{TaskID: "w", UUID: "GPU-2", Index: 2, Fraction: 1, MemMiB: 3000},
	}
	if !reflect.DeepEqual(gs, want) {
		t.Fatalf("grants = %+v, want %+v", gs, want)
	}
	again, err := l.AdmitWhole("w", 2, nil)
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("re-admit = %+v, %v; want the existing grants", again, err)
	}
	if _, err := l.Admit("w", Request{Fraction: 0.1}); err == nil || !strings.Contains(err.Error(), "already holds 2 whole GPUs") {
		t.Errorf("fractional admit of a whole-GPU task: %v", err)
	}
	// A fraction no longer fits on a whole-granted GPU.
	if _, err := l.Admit("f2", Request{Fraction: 0.1, UUID: "GPU-1"}); err == nil {
		t.Error("fraction on a whole-granted GPU: want error")
	}
	_, err = l.AdmitWhole("w2", 2, nil)
	if err == nil || err.Error() != "gpus = 2 does not fit: only 1 of 4 GPUs are wholly free (GPU 3)" {
		t.Errorf("err = %v", err)
	}
	if err := l.Release("w"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AdmitWhole("w2", 2, nil); err != nil {
		t.Errorf("after release: %v", err)
	}
}

func TestAdmitWholePinned(t *testing.T) {
	l, _ := openTemp(t, devices(1000, 1000, 1000))
	mustAdmit(t, l, "frac", Request{Fraction: 0.25, UUID: "GPU-1"})

	gs, err := l.AdmitWhole("p", 0, []string{"GPU-2", "GPU-0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 2 || gs[0].UUID != "GPU-2" || gs[1].UUID != "GPU-0" || gs[0].Fraction != 1 || gs[1].MemMiB != 1000 {
		t.Errorf("pinned grants = %+v", gs)
	}
	for _, c := range []struct {
		count  int
		pinned []string
		want   string
	}{
		{1, []string{"GPU-1"}, "GPU 1 (GPU-1) is not wholly free: 0.25 of it is granted to 1 task(s)"},
		{1, []string{"GPU-7"}, "GPU GPU-7 (gpu_uuids) is not on this node"},
		{2, []string{"GPU-1"}, "gpus = 2 but gpu_uuids lists 1 GPUs"},
		{0, []string{"GPU-1", "GPU-1"}, "gpu_uuids lists GPU GPU-1 twice"},
		{0, nil, "gpus 0 must be at least 1"},
		{-1, nil, "gpus -1 must be at least 1"},
		{5, nil, "gpus = 5 but this node has 3 GPUs"},
	} {
		_, err := l.AdmitWhole("q", c.count, c.pinned)
		if err == nil || err.Error() != c.want {
			t.Errorf("AdmitWhole(%d, %v) err = %v, want %q", c.count, c.pinned, err, c.want)
		}
		if len(l.Grants("q")) != 0 {
			t.Errorf("failed AdmitWhole left grants")
		}
	}
}
