package policy

import "testing"

// UpdateWithProgress sees a job whose ProgressGen alone moved as
// changed, which Update does not; without ProgressGen both follow
// JobGen alone.
func TestJobTrackProgress(t *testing.T) {
	s := &Snapshot{Jobs: make([]*Job, 3), JobGen: []uint64{1, 2, 3}, ProgressGen: []uint64{4, 5, 6}}
	var plain, prog JobTrack
	same := func(tr *JobTrack) [3]bool { return [3]bool{tr.Same(0), tr.Same(1), tr.Same(2)} }
	step := func(want, wantProg [3]bool) {
		t.Helper()
		plain.Update(s)
		prog.UpdateWithProgress(s)
		if got := same(&plain); got != want {
			t.Fatalf("Update: Same = %v, want %v", got, want)
		}
		if got := same(&prog); got != wantProg {
			t.Fatalf("UpdateWithProgress: Same = %v, want %v", got, wantProg)
		}
	}
	step([3]bool{}, [3]bool{}) // first sight: nothing known
	step([3]bool{true, true, true}, [3]bool{true, true, true})
	s.ProgressGen[1] = 7 // job 1 reported progress
	s.JobGen[2] = 8      // job 2 changed otherwise
	step([3]bool{true, true, false}, [3]bool{true, false, false})
	s.ProgressGen = nil // progress back under JobGen
	step([3]bool{true, true, true}, [3]bool{true, true, true})
	s.ProgressGen = []uint64{4, 7, 6} // apart again: not known since
	step([3]bool{true, true, true}, [3]bool{false, false, false})
	s.ProgressGen[0] = 0 // 0: untracked, read every time
	step([3]bool{true, true, true}, [3]bool{false, true, true})
	s.JobGen = nil // untracked: nothing is the same
	step([3]bool{}, [3]bool{})
	if s.ProgressTracked() {
		t.Fatal("ProgressGen without JobGen counts as tracked")
	}
}
