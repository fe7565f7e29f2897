package policy

import "testing"

// A giant gang takes a spare the Capacity faulted in between decisions:
// only gangs of reserveMin slots or more, only a spare at most twice the
// gang's size, each spare once, as many as the most giants one decision
// asked for (at most maxSpares), and a spare grown when a larger giant
// came. The storage handed out is zero, of the length and capacity asked.
func TestSlotReserveServesGiants(t *testing.T) {
	c := NewCapacity(testCluster("a1", "a2"))
	giant := reserveMin + 100
	fresh := c.NewGang(giant, giant).slots
	if c.reserve.taken != 0 || len(c.reserve.spares) != 0 {
		t.Fatalf("no Idle yet: %d taken, %d spares", c.reserve.taken, len(c.reserve.spares))
	}
	c.NewGang(giant, giant) // two giants in one decision
	c.NewGang(reserveMin-1, reserveMin-1)
	c.Idle()
	if len(c.reserve.spares) != 2 {
		t.Fatalf("after a decision of two giants: %d spares, want 2", len(c.reserve.spares))
	}
	spares := [2]*Slot{&c.reserve.spares[0][0], &c.reserve.spares[1][0]}
	if small := c.NewGang(reserveMin-1, reserveMin-1).slots; c.reserve.taken != 0 || &small[0] == spares[0] || &small[0] == spares[1] {
		t.Fatal("a gang below reserveMin took a spare")
	}
	var got [3][]Slot
	for i := range got {
		got[i] = c.NewGang(giant-50, giant).slots
		if len(got[i]) != giant-50 || cap(got[i]) != giant {
			t.Fatalf("gang %d: len %d cap %d, want %d and %d", i, len(got[i]), cap(got[i]), giant-50, giant)
		}
		for k, s := range got[i][:cap(got[i])] {
			if s != (Slot{}) {
				t.Fatalf("gang %d: slot %d not zero: %+v", i, k, s)
			}
		}
	}
	if c.reserve.taken != 2 || &got[0][0] == &got[1][0] || &got[2][0] == spares[0] || &got[2][0] == spares[1] || &got[0][0] == &fresh[0] {
		t.Fatalf("three giants after two spares: %d taken, want 2, each spare once", c.reserve.taken)
	}
	for _, g := range got[:2] {
		if &g[0] != spares[0] && &g[0] != spares[1] {
			t.Fatal("a giant took fresh storage while a spare fit it")
		}
	}
	c.Idle() // three asked: three spares
	if len(c.reserve.spares) != 3 {
		t.Fatalf("after a decision of three giants: %d spares, want 3", len(c.reserve.spares))
	}
	// a larger giant grows every spare at the next Idle; a gang less
	// than half a spare's size leaves it
	c.NewGang(3*giant, 3*giant)
	c.Idle()
	for i, s := range c.reserve.spares {
		if cap(s) != 3*giant {
			t.Fatalf("spare %d: cap %d after a giant of %d", i, cap(s), 3*giant)
		}
	}
	taken := c.reserve.taken
	c.NewGang(reserveMin, reserveMin)
	if c.reserve.taken != taken {
		t.Fatal("a giant less than half a spare's size took it")
	}
	for range 2 * maxSpares {
		c.NewGang(3*giant, 3*giant)
	}
	c.Idle()
	if len(c.reserve.spares) != maxSpares {
		t.Fatalf("%d spares, want at most %d", len(c.reserve.spares), maxSpares)
	}
}
