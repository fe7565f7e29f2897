package tune

import "testing"

// FuzzParseSpec: any input gets a spec or an error, never a panic, and a
// valid spec always gives a tuner whose first decisions are well formed.
func FuzzParseSpec(f *testing.F) {
	f.Add([]byte(goodSpec))
	f.Add([]byte(`tune "h" {
  metric = "acc"
  mode = "max"
  algorithm = "hyperband"
  budget {
    min = 1
    max = 81
  }
  param "p" {
    type = "uniform"
    min = 0
    max = 1
  }
}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := ParseSpec("fuzz.hcl", src)
		if err != nil {
			return
		}
		tu, err := NewTuner(*s)
		if err != nil {
			return
		}
		for _, a := range tu.Next() {
			if a.Op == "run" && !(a.Budget > 0 && a.Budget <= s.Budget.Max) {
				t.Fatalf("run budget %v outside (0, %v]", a.Budget, s.Budget.Max)
			}
		}
	})
}
