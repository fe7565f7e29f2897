package gzip64

import (
	"bytes"
	"strings"
	"testing"
)

func TestRoundTripAndBadInput(t *testing.T) {
	in := bytes.Repeat([]byte("caravan "), 1000)
	s, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(s, len(in))
	if err != nil || !bytes.Equal(out, in) {
		t.Fatalf("round trip: %v", err)
	}
	if _, err := Decode(s, len(in)-1); err == nil || !strings.Contains(err.Error(), "inflates past") {
		t.Fatalf("over the limit: %v", err)
	}
	for name, bad := range map[string]string{"not base64": "!!!", "not gzip": "aGVsbG8=", "truncated": s[:len(s)/2]} {
		if _, err := Decode(bad, 1<<20); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}
