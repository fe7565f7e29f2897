package tune

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/caravan-dl/caravan/internal/gzip64"
)

// TestBigStateCompresses: a 4,000-trial state is far over Nomad's 64 KiB
// Variable limit as JSON and fits once gzipped; it round-trips.
func TestBigStateCompresses(t *testing.T) {
	s := spec(AlgASHA, 4000, 1, 81)
	s.Params = append(s.Params, Param{Name: "lr", Type: ParamLogUniform, Min: 1e-5, Max: 1})
	tu := newTuner(t, s)
	tu.Next()
	raw, err := json.Marshal(&State{Tuner: tu})
	if err != nil {
		t.Fatal(err)
	}
	z, err := gzip64.Encode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) <= 64<<10 || len(z) > 64<<10 {
		t.Fatalf("json %d bytes, compressed %d", len(raw), len(z))
	}
	back, err := gzip64.Decode(z, maxState)
	if err != nil || !bytes.Equal(back, raw) {
		t.Fatalf("round trip: %v", err)
	}
	if _, err := gzip64.Decode("not base64!", maxState); err == nil {
		t.Fatal("garbage accepted")
	}
}
