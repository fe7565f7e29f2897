package ledger

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/caravan-dl/caravan/driver/gpu"
)

// TestPropertyRandomSequences runs thousands of random admit/release
// sequences on random GPU sets. After every step no GPU is over its
// fraction or memory, every decision agrees with a brute-force oracle, and
// a reopened ledger equals the live one.
func TestPropertyRandomSequences(t *testing.T) {
	seqs := 2000
	if testing.Short() {
		seqs = 200
	}
	dir := fastTempDir(t)
	seen := map[string]int{}
	for seed := int64(1); seed <= int64(seqs); seed++ {
		p := &prop{t: t, rng: rand.New(rand.NewSource(seed)), seed: seed, seen: seen}
		p.run(filepath.Join(dir, fmt.Sprintf("ledger-%d.json", seed)))
		if t.Failed() {
			t.Fatalf("failed with seed %d", seed)
		}
	}
	t.Logf("outcomes over %d sequences: %v", seqs, seen)
	// The sequences must exercise every path, not just the easy ones.
	for _, k := range []string{"admit ok", "admit no fit", "admit invalid", "whole ok", "whole no fit", "release", "reopen"} {
		if seen[k] < seqs/20 {
			t.Errorf("only %d %q outcomes", seen[k], k)
		}
	}
}

// fastTempDir is a temporary directory in memory (/dev/shm) when there is
// one: the ledger fsyncs every change, which on disk makes tens of
// thousands of steps take minutes.
func fastTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/dev/shm", "ledger-prop-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

type prop struct {
	t    *testing.T
	rng  *rand.Rand
	seed int64
	devs []gpu.Device
	l    *Ledger
	path string
	ids  []string // tasks admitted so far (some released)
	seen map[string]int
}

var memSizes = []uint64{1, 1000, 16384, 40960, 81920}
var fractions = []float64{0.1, 0.125, 0.2, 0.25, 0.3, 1.0 / 3, 0.4, 0.5, 0.6, 2.0 / 3, 0.75, 0.9, 1}

func (p *prop) run(path string) {
	n := p.rng.Intn(6)
	for i := 0; i < n; i++ {
		p.devs = append(p.devs, gpu.Device{Index: i, UUID: fmt.Sprintf("GPU-%d-%d", p.seed, i),
			MemoryMiB: memSizes[p.rng.Intn(len(memSizes))]})
	}
	p.path = path
	p.l = p.open()
	steps := 5 + p.rng.Intn(40)
	for step := 0; step < steps && !p.t.Failed(); step++ {
		switch r := p.rng.Float64(); {
		case r < 0.5:
			p.admit()
		case r < 0.62:
			p.admitWhole()
		case r < 0.67 && len(p.ids) > 0:
			p.readmit()
		default:
			p.release()
		}
		p.checkInvariants()
		if p.rng.Intn(10) == 0 {
			p.reopen()
		}
	}
	p.reopen()
}

func (p *prop) open() *Ledger {
	l, err := Open(p.path, p.devs)
	if err != nil {
		p.t.Fatalf("seed %d: open: %v", p.seed, err)
	}
	return l
}

func (p *prop) newID() string {
	id := fmt.Sprintf("task-%d", len(p.ids))
	p.ids = append(p.ids, id)
	return id
}

func (p *prop) randomRequest() Request {
	var req Request
	switch p.rng.Intn(10) {
	case 0:
		req.Fraction = p.rng.Float64()
	case 1:
		req.Fraction = []float64{0, -0.5, 1.0000001, 2, math.NaN()}[p.rng.Intn(5)]
	default:
		req.Fraction = fractions[p.rng.Intn(len(fractions))]
	}
	if p.rng.Intn(2) == 0 {
		req.MemMiB = uint64(p.rng.Int63n(100000)) + 1
	}
	if p.rng.Intn(5) == 0 {
		if len(p.devs) > 0 && p.rng.Intn(4) > 0 {
			req.UUID = p.devs[p.rng.Intn(len(p.devs))].UUID
		} else {
			req.UUID = "GPU-missing"
		}
	}
	return req
}

// oracle computes per-GPU usage from the grant list alone.
func (p *prop) oracle() map[string]Usage {
	use := map[string]Usage{}
	for _, d := range p.devs {
		use[d.UUID] = Usage{UUID: d.UUID, Index: d.Index, TotalMiB: d.MemoryMiB}
	}
	for _, g := range p.l.All() {
		u, ok := use[g.UUID]
		if !ok {
			p.t.Errorf("seed %d: grant %+v on unknown GPU", p.seed, g)
			continue
		}
		u.UsedFraction += g.Fraction
		u.UsedMiB += g.MemMiB
		u.Tasks++
		use[g.UUID] = u
	}
	return use
}

func wantMem(req Request, d gpu.Device) uint64 {
	if req.MemMiB > 0 {
		return req.MemMiB
	}
	return memFor(req, d)
}

func (p *prop) admit() {
	req := p.randomRequest()
	before := p.oracle()
	id := p.newID()
	g, err := p.l.Admit(id, req)
	valid := !math.IsNaN(req.Fraction) && req.Fraction > 0 && req.Fraction <= 1
	var fitting []gpu.Device
	for _, d := range p.devs {
		u := before[d.UUID]
		if (req.UUID == "" || req.UUID == d.UUID) &&
			u.UsedFraction+req.Fraction <= 1+epsilon && u.UsedMiB+wantMem(req, d) <= d.MemoryMiB {
			fitting = append(fitting, d)
		}
	}
	switch {
	case !valid:
		p.seen["admit invalid"]++
	case len(fitting) == 0:
		p.seen["admit no fit"]++
	default:
		p.seen["admit ok"]++
	}
	if !valid || len(fitting) == 0 {
		if err == nil {
			p.t.Errorf("seed %d: admit %+v succeeded (%+v) but oracle says no fit", p.seed, req, g)
		}
		return
	}
	if err != nil {
		p.t.Errorf("seed %d: admit %+v failed (%v) but fits on %d GPU(s)", p.seed, req, err, len(fitting))
		return
	}
	d := p.devs[g.Index]
	if g.UUID != d.UUID || g.Fraction != req.Fraction || g.MemMiB != wantMem(req, d) || g.TaskID != id {
		p.t.Errorf("seed %d: grant %+v does not match request %+v on %+v", p.seed, g, req, d)
	}
	p.checkBestFit(g, req, fitting, before)
}

// checkBestFit: no fitting GPU leaves strictly less free fraction, or the
// same fraction and less memory, or ties everything at a lower index.
func (p *prop) checkBestFit(g Grant, req Request, fitting []gpu.Device, before map[string]Usage) {
	left := func(d gpu.Device) (float64, uint64) {
		u := before[d.UUID]
		return 1 - u.UsedFraction - req.Fraction, d.MemoryMiB - u.UsedMiB - wantMem(req, d)
	}
	gf, gm := left(p.devs[g.Index])
	for _, c := range fitting {
		cf, cm := left(c)
		same := math.Abs(cf-gf) <= epsilon
		if cf < gf-epsilon || (same && cm < gm) || (same && cm == gm && c.Index < g.Index) {
			p.t.Errorf("seed %d: %+v went to GPU %d, but GPU %d fits better", p.seed, req, g.Index, c.Index)
		}
	}
}

func (p *prop) admitWhole() {
	before := p.oracle()
	var free []string
	for _, d := range p.devs {
		if before[d.UUID].Tasks == 0 {
			free = append(free, d.UUID)
		}
	}
	count := 1 + p.rng.Intn(3)
	var pinned []string
	if len(p.devs) > 0 && p.rng.Intn(3) == 0 {
		for _, i := range p.rng.Perm(len(p.devs))[:min(count, len(p.devs))] {
			pinned = append(pinned, p.devs[i].UUID)
		}
		count = 0
	}
	gs, err := p.l.AdmitWhole(p.newID(), count, pinned)
	want := count <= len(free) && count > 0
	if pinned != nil {
		want = true
		for _, uuid := range pinned {
			want = want && before[uuid].Tasks == 0
		}
	}
	p.seen[map[bool]string{true: "whole ok", false: "whole no fit"}[want]]++
	if (err == nil) != want {
		p.t.Errorf("seed %d: AdmitWhole(%d, %v) err = %v, oracle says fit = %v", p.seed, count, pinned, err, want)
	}
	for _, g := range gs {
		if before[g.UUID].Tasks != 0 || g.Fraction != 1 || g.MemMiB != before[g.UUID].TotalMiB {
			p.t.Errorf("seed %d: whole grant %+v on a busy GPU or not whole", p.seed, g)
		}
	}
}

func (p *prop) readmit() {
	id := p.ids[p.rng.Intn(len(p.ids))]
	held := p.l.Grants(id)
	if len(held) != 1 {
		return
	}
	g, err := p.l.Admit(id, p.randomRequest())
	if err == nil && g != held[0] {
		p.t.Errorf("seed %d: re-admit of %s gave %+v, want %+v", p.seed, id, g, held[0])
	}
}

func (p *prop) release() {
	id := "unknown"
	if len(p.ids) > 0 && p.rng.Intn(10) > 0 {
		id = p.ids[p.rng.Intn(len(p.ids))]
	}
	p.seen["release"]++
	if err := p.l.Release(id); err != nil {
		p.t.Errorf("seed %d: release %s: %v", p.seed, id, err)
	}
	if len(p.l.Grants(id)) != 0 {
		p.t.Errorf("seed %d: %s still holds grants after release", p.seed, id)
	}
}

func (p *prop) checkInvariants() {
	use := p.oracle()
	for _, u := range use {
		if u.UsedFraction > 1+epsilon || u.UsedMiB > u.TotalMiB {
			p.t.Errorf("seed %d: GPU %s over-committed: %+v", p.seed, u.UUID, u)
		}
	}
	got := p.l.Usage()
	if len(got) != len(p.devs) {
		p.t.Fatalf("seed %d: usage has %d GPUs, want %d", p.seed, len(got), len(p.devs))
	}
	for i, u := range got {
		w := use[p.devs[i].UUID]
		if u.Index != i || u.Tasks != w.Tasks || u.UsedMiB != w.UsedMiB || math.Abs(u.UsedFraction-w.UsedFraction) > epsilon {
			p.t.Errorf("seed %d: usage %+v, oracle %+v", p.seed, u, w)
		}
	}
}

func (p *prop) reopen() {
	p.seen["reopen"]++
	r := p.open()
	if !reflect.DeepEqual(r.All(), p.l.All()) || !reflect.DeepEqual(r.Usage(), p.l.Usage()) {
		p.t.Errorf("seed %d: reopened ledger differs:\n got %+v\nwant %+v", p.seed, r.All(), p.l.All())
	}
	p.l = r // continue on the reopened ledger
}
