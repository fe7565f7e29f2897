package ledger

import (
	"strings"
	"testing"
)

type admitted struct {
	task string
	req  Request
}

func TestAdmitTable(t *testing.T) {
	cases := []struct {
		name    string
		mem     []uint64
		before  []admitted
		req     Request
		wantIdx int
		wantMem uint64
		wantErr string
	}{
		{name: "empty node takes GPU 0", mem: []uint64{1000, 1000}, req: Request{Fraction: 0.5}, wantIdx: 0, wantMem: 500},
		{name: "halves share a GPU", mem: []uint64{1000, 1000},
			before: []admitted{{"a", Request{Fraction: 0.5}}}, req: Request{Fraction: 0.5}, wantIdx: 0, wantMem: 500},
		{name: "float sums fit", mem: []uint64{1000},
			before: []admitted{{"a", Request{Fraction: 0.1}}, {"b", Request{Fraction: 0.2}}, {"c", Request{Fraction: 0.3}}},
			req:    Request{Fraction: 0.4}, wantIdx: 0, wantMem: 400},
		{name: "best fit picks the fuller GPU", mem: []uint64{1000, 1000, 1000},
			before: []admitted{{"a", Request{Fraction: 0.3, UUID: "GPU-1"}}, {"b", Request{Fraction: 0.6, UUID: "GPU-2"}}},
			req:    Request{Fraction: 0.4}, wantIdx: 2, wantMem: 400},
		{name: "tie on fraction goes to less free memory", mem: []uint64{1000, 1000},
			before: []admitted{{"a", Request{Fraction: 0.5, MemMiB: 100, UUID: "GPU-0"}}, {"b", Request{Fraction: 0.5, MemMiB: 700, UUID: "GPU-1"}}},
			req:    Request{Fraction: 0.2, MemMiB: 100}, wantIdx: 1, wantMem: 100},
		{name: "full tie goes to lowest index", mem: []uint64{1000, 1000, 1000},
			before: []admitted{{"a", Request{Fraction: 0.5, UUID: "GPU-2"}}, {"b", Request{Fraction: 0.5, UUID: "GPU-1"}}},
			req:    Request{Fraction: 0.5}, wantIdx: 1, wantMem: 500},
		{name: "proportional memory rounds up", mem: []uint64{1001}, req: Request{Fraction: 0.5}, wantIdx: 0, wantMem: 501},
		{name: "proportional memory has no float noise", mem: []uint64{81920}, req: Request{Fraction: 0.1}, wantIdx: 0, wantMem: 8192},
		{name: "explicit memory", mem: []uint64{1000}, req: Request{Fraction: 0.1, MemMiB: 900}, wantIdx: 0, wantMem: 900},
		{name: "whole GPU as a fraction", mem: []uint64{1000}, req: Request{Fraction: 1}, wantIdx: 0, wantMem: 1000},
		{name: "memory picks the bigger GPU", mem: []uint64{1000, 4000}, req: Request{Fraction: 0.1, MemMiB: 2000}, wantIdx: 1, wantMem: 2000},
		{name: "pinned", mem: []uint64{1000, 1000}, req: Request{Fraction: 0.3, UUID: "GPU-1"}, wantIdx: 1, wantMem: 300},

		{name: "fraction zero", mem: []uint64{1000}, req: Request{Fraction: 0}, wantErr: "gpu_fraction 0 must be in (0,1]"},
		{name: "fraction above one", mem: []uint64{1000}, req: Request{Fraction: 1.5}, wantErr: "gpu_fraction 1.5 must be in (0,1]"},
		{name: "fraction negative", mem: []uint64{1000}, req: Request{Fraction: -0.1}, wantErr: "must be in (0,1]"},
		{name: "no GPUs", mem: nil, req: Request{Fraction: 0.5}, wantErr: "gpu_fraction 0.50 requested but this node has no GPUs"},
		{name: "fraction does not fit", mem: []uint64{1000, 1000},
			before: []admitted{{"a", Request{Fraction: 0.5, UUID: "GPU-0"}}, {"b", Request{Fraction: 0.7, UUID: "GPU-1"}}},
			req:    Request{Fraction: 0.6}, wantErr: "gpu_fraction 0.60 does not fit on any GPU: best free is 0.50 on GPU 0 (GPU-0)"},
		{name: "free fraction printed without float noise", mem: []uint64{1000},
			before: []admitted{{"a", Request{Fraction: 0.4}}, {"b", Request{Fraction: 0.1}}},
			req:    Request{Fraction: 0.6}, wantErr: "best free is 0.50 on GPU 0"},
		{name: "memory does not fit", mem: []uint64{1000, 1000},
			before:  []admitted{{"a", Request{Fraction: 0.1, MemMiB: 900, UUID: "GPU-0"}}, {"b", Request{Fraction: 0.1, MemMiB: 800, UUID: "GPU-1"}}},
			req:     Request{Fraction: 0.2, MemMiB: 300},
			wantErr: "gpu_memory 300 MiB does not fit on any GPU with gpu_fraction 0.20 free: most free memory is 200 MiB on GPU 1 (GPU-1)"},
		{name: "memory larger than any GPU", mem: []uint64{1000, 2000}, req: Request{Fraction: 0.2, MemMiB: 3000},
			wantErr: "gpu_memory 3000 MiB exceeds every GPU on this node (the largest has 2000 MiB)"},
		{name: "pinned unknown GPU", mem: []uint64{1000}, req: Request{Fraction: 0.2, UUID: "GPU-9"},
			wantErr: "GPU GPU-9 (gpu_uuids) is not on this node"},
		{name: "pinned fraction full", mem: []uint64{1000, 1000},
			before: []admitted{{"a", Request{Fraction: 0.75, UUID: "GPU-1"}}},
			req:    Request{Fraction: 0.3, UUID: "GPU-1"}, wantErr: "gpu_fraction 0.30 does not fit on GPU 1 (GPU-1): free is 0.25"},
		{name: "pinned memory full", mem: []uint64{1000},
			before: []admitted{{"a", Request{Fraction: 0.1, MemMiB: 950}}},
			req:    Request{Fraction: 0.1, MemMiB: 100, UUID: "GPU-0"}, wantErr: "gpu_memory 100 MiB does not fit on GPU 0 (GPU-0): free memory is 50 MiB"},
		{name: "pinned memory above total", mem: []uint64{1000},
			req: Request{Fraction: 0.1, MemMiB: 2000, UUID: "GPU-0"}, wantErr: "gpu_memory 2000 MiB exceeds the 1000 MiB of GPU 0 (GPU-0)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, _ := openTemp(t, devices(c.mem...))
			for _, b := range c.before {
				mustAdmit(t, l, b.task, b.req)
			}
			g, err := l.Admit("new", c.req)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				if len(l.Grants("new")) != 0 {
					t.Error("a failed admission left a grant")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Grant{TaskID: "new", UUID: devices(c.mem...)[c.wantIdx].UUID, Index: c.wantIdx, Fraction: c.req.Fraction, MemMiB: c.wantMem}
			if g != want {
				t.Errorf("grant = %+v, want %+v", g, want)
			}
		})
	}
}

func TestAdmitIdempotent(t *testing.T) {
	l, _ := openTemp(t, devices(1000, 1000))
	g1 := mustAdmit(t, l, "t", Request{Fraction: 0.5})
	g2 := mustAdmit(t, l, "t", Request{Fraction: 0.9, UUID: "GPU-1"})
	if g1 != g2 {
		t.Errorf("re-admit gave %+v, want the existing %+v", g2, g1)
	}
	if u := l.Usage()[0]; u.Tasks != 1 || u.UsedFraction != 0.5 {
		t.Errorf("usage after re-admit = %+v", u)
	}
	if _, err := l.Admit("", Request{Fraction: 0.1}); err == nil {
		t.Error("empty task ID: want error")
	}
}

func TestReleaseFreesCapacity(t *testing.T) {
	l, _ := openTemp(t, devices(1000))
	mustAdmit(t, l, "a", Request{Fraction: 0.5})
	mustAdmit(t, l, "b", Request{Fraction: 0.5})
	if _, err := l.Admit("c", Request{Fraction: 0.6}); err == nil {
		t.Fatal("want no fit")
	}
	if err := l.Release("a"); err != nil {
		t.Fatal(err)
	}
	if err := l.Release("a"); err != nil {
		t.Errorf("second release: %v", err)
	}
	if err := l.Release("never"); err != nil {
		t.Errorf("release of unknown task: %v", err)
	}
	if _, err := l.Admit("c", Request{Fraction: 0.5}); err != nil {
		t.Fatalf("after release: %v", err)
	}
	u := l.Usage()[0]
	if u.Tasks != 2 || u.UsedMiB != 1000 || u.FreeMiB() != 0 || u.FreeFraction() > epsilon {
		t.Errorf("usage = %+v", u)
	}
}

func TestFmtFrac(t *testing.T) {
	for in, want := range map[float64]string{0.6: "0.60", 0.5: "0.50", 1: "1.00", 0: "0.00", 0.125: "0.125",
		0.49999999999999994: "0.50", 1.0 / 3: "0.333333"} {
		if got := fmtFrac(in); got != want {
			t.Errorf("fmtFrac(%v) = %q, want %q", in, got, want)
		}
	}
}
