package order

import (
	"math/rand"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// roomFor keeps a buffer that has room, and otherwise copies it, its
// contents kept, into one with room past n.
func TestRoomFor(t *testing.T) {
	xs := make([]int32, 3, 200)
	xs[0], xs[1], xs[2] = 7, 8, 9
	if ys := roomFor(xs, 150); &ys[0] != &xs[0] {
		t.Fatal("a buffer with room was copied")
	}
	ys := roomFor(xs, 640)
	if len(ys) != 3 || ys[0] != 7 || ys[2] != 9 {
		t.Fatalf("contents not kept: %v", ys)
	}
	if cap(ys) < 640+640/roomLeft || cap(roomFor(ys, 640)) != cap(ys) {
		t.Fatalf("cap %d: no room past 640, or regrown again", cap(ys))
	}
}

// After Idle, a change-ranked ordering ranks a job count past the
// capacity its buffers were made with without regrowing them, and ranks
// as a fresh instance; without Idle, the same calls regrow them.
func TestIdleLeavesRoom(t *testing.T) {
	for _, idle := range []bool{true, false} {
		if regrown := idleLeavesRoom(t, idle); regrown == idle {
			t.Fatalf("with Idle %v, the call past the capacity regrew a buffer: %v", idle, regrown)
		}
	}
}

// idleLeavesRoom ranks 2,000 jobs, then up to just short of the
// position buffers' capacity, (idle: then Idle) and then 40 more, and
// reports whether that last call regrew a buffer.
func idleLeavesRoom(t *testing.T, idle bool) (regrown bool) {
	c := &serviceChurn{submitChurn{rng: rand.New(rand.NewSource(3)), s: &policy.Snapshot{JobGen: []uint64{}}}}
	add := func(k int) { // k arrivals
		for range k {
			c.s.Jobs, c.s.JobGen = append(c.s.Jobs, nil), append(c.s.JobGen, 0)
			c.set(len(c.s.Jobs)-1, c.job())
		}
	}
	o := NewSRTFOracle()
	tr := &o.cr.t
	add(2000)
	o.Order(c.s)
	add(min(cap(tr.key), cap(tr.gen)) - len(c.s.Jobs) - 20)
	o.Order(c.s)
	if idle {
		o.Idle()
	}
	bufs := map[*rankEntry]bool{&tr.ord[:1][0]: true, &tr.next[:1][0]: true}
	key, gen := &tr.key[0], &tr.gen[0]
	c.s.Now += 400 // the running jobs' keys move
	add(40)        // past the capacity the buffers were made with
	got := o.Order(c.s)
	regrown = !bufs[&tr.ord[:1][0]] || !bufs[&tr.next[:1][0]] || &tr.key[0] != key || &tr.gen[0] != gen
	gens := c.s.JobGen
	c.s.JobGen = nil
	want := NewSRTFOracle().Order(c.s)
	c.s.JobGen = gens
	if len(got) != len(want) {
		t.Fatalf("%d ranked, want %d", len(got), len(want))
	}
	for r := range want {
		if got[r].Job != want[r].Job {
			t.Fatalf("rank %d is %s, want %s", r, got[r].Job.ID, want[r].Job.ID)
		}
	}
	return regrown
}
