package driver

import "testing"

// TestJobDirName: a dispatched child's ID (with '/') gets a checkpoint dir
// of its own, and escaping keeps distinct IDs distinct.
func TestJobDirName(t *testing.T) {
	cases := map[string]string{
		"train":                       "train",
		"tune-digits/dispatch-17-abc": "tune-digits%2Fdispatch-17-abc",
		"a%2Fb":                       "a%252Fb",
		"nightly/periodic-1700000000": "nightly%2Fperiodic-1700000000",
	}
	for in, want := range cases {
		got := jobDirName(in)
		if got != want {
			t.Errorf("jobDirName(%q) = %q, want %q", in, got, want)
		}
		if err := safePathPart(got); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
	if jobDirName("a/b") == jobDirName("a%2Fb") {
		t.Fatal("two job IDs share a checkpoint dir")
	}
}
