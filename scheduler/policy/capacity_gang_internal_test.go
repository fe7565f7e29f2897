package policy

import "testing"

// A written gang skips the commit's over-commit check only where its
// writer found every GPU holding it and nothing changed the GPUs since:
// a GPU written twice, a slot that does not fit, and a commit between
// the writing and the gang's own each leave the check to the commit,
// which rejects the over-commit as for any placement.
func TestWrittenGangCheckedOnlyAsWritten(t *testing.T) {
	half := Demand{Workers: 2, Fraction: 0.5}
	cases := []struct {
		name  string
		write func(c *Capacity) Placement
		fits  bool
	}{
		{"fits", func(c *Capacity) Placement {
			w := c.NewGang(2, 2)
			return w.Placement(w.PutOn(0, 0, 0, 2, half))
		}, true},
		{"too many on a GPU", func(c *Capacity) Placement {
			w := c.NewGang(3, 3)
			return w.Placement(w.PutOn(0, 0, 0, 3, Demand{Workers: 3, Fraction: 0.5}))
		}, false},
		{"a GPU written twice", func(c *Capacity) Placement {
			w := c.NewGang(3, 3)
			return w.Placement(w.PutOn(w.PutOn(0, 0, 0, 2, half), 0, 0, 1, half))
		}, false},
		{"a commit since the writing", func(c *Capacity) Placement {
			w := c.NewGang(2, 2)
			p := w.Placement(w.PutOn(0, 0, 0, 2, half))
			if err := c.Commit(Placement{Slots: []Slot{{Node: "a1", GPU: 0, Fraction: 0.5}}}, 0); err != nil {
				t.Fatal(err)
			}
			return p
		}, false},
	}
	for _, tc := range cases {
		c := NewCapacity(testCluster("a1", "a2"))
		p := tc.write(c)
		err := c.commitPlaced(&Job{ID: "g"}, p, 0)
		if (err == nil) != tc.fits {
			t.Errorf("%s: commit error %v, want it to fit %v", tc.name, err, tc.fits)
		}
	}
}
