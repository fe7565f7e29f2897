package live

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// The stream is read frame by frame with payloads kept as JSON: a
// heartbeat is skipped, a job event decodes as the mirror reads it, and a
// corrupt frame ends the stream with an error (the watcher then
// reconnects from its last index and the round reconciles in full).
func TestStreamKeepsPayloadsAsJSONAndStopsAtACorruptFrame(t *testing.T) {
	var query map[string][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/event/stream" {
			http.NotFound(w, r)
			return
		}
		query = r.URL.Query()
		fmt.Fprint(w, "{}\n")
		fmt.Fprint(w, `{"Index":12,"Events":[{"Topic":"Job","Type":"JobRegistered","Key":"a","Index":12,`+
			`"Payload":{"Job":{"ID":"a","Namespace":"default","Type":"batch","NodePool":"caravan-queue","Status":"pending","ModifyIndex":12,"JobModifyIndex":12}}}]}`+"\n")
		fmt.Fprint(w, "{}\n")
		fmt.Fprint(w, `{"Index":13,"Events":[{"Topic":"Job","Payload":{"Job":`+"\n") // cut off mid-frame
		fmt.Fprint(w, `]]]`+"\n")
	}))
	defer srv.Close()
	c, err := api.NewClient(&api.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Token = "t"
	s, err := New(cfg, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch, err := s.streamEvents(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	var frames []eventFrame
	for f := range ch {
		frames = append(frames, f)
	}
	if len(frames) != 2 || frames[0].err != nil || frames[1].err == nil {
		t.Fatalf("frames %+v: want the job frame, then an error", frames)
	}
	if got := query["index"]; !slices.Equal(got, []string{"7"}) {
		t.Errorf("index %v, want 7", got)
	}
	if len(query["topic"]) != len(streamTopics) || query["namespace"][0] != "default" {
		t.Errorf("topics %v, namespace %v", query["topic"], query["namespace"])
	}
	ev := frames[0].Events[0]
	m := newMirror()
	if changed, err := s.applyEvent(m, &ev); err != nil || !changed {
		t.Fatalf("job event: changed %v, %v", changed, err)
	}
	if j := m.jobs["a"]; j == nil || j.NodePool != "caravan-queue" || j.Status != "pending" {
		t.Fatalf("mirrored job %+v", j)
	}
}
