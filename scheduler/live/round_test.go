package live

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// A round over slowRound logs where its time went, stage by stage; a
// quick one logs nothing.
func TestSlowRoundLogsItsStages(t *testing.T) {
	s, _ := observeScheduler(t)
	var buf bytes.Buffer
	s.log = hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info})
	if _, err := s.round(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "slow round") {
		t.Fatalf("a quick round logged as slow: %s", buf.String())
	}
	// The scheduler's clock moves 2 s at every reading: the round's start
	// and end are far apart.
	at := time.Unix(1000, 0)
	s.now = func() time.Time { at = at.Add(2 * time.Second); return at }
	if _, err := s.round(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "slow round") {
		t.Fatalf("a slow round logged nothing: %q", out)
	}
	for _, stage := range []string{"observe=", "classify=", "unplaced=", "park=", "save="} {
		if !strings.Contains(out, stage) {
			t.Fatalf("slow round line lacks %s: %q", stage, out)
		}
	}
}

// The clock adds a stage's time across marks and keeps first-run order.
func TestRoundClockSumsStagesInOrder(t *testing.T) {
	s := testScheduler(t)
	c := s.clock()
	for _, st := range []string{"observe", "classify", "decide", "classify"} {
		c.last = c.last.Add(-10 * time.Millisecond)
		c.mark(st)
	}
	if strings.Join(c.names, " ") != "observe classify decide" || c.took[1] < 20*time.Millisecond ||
		c.took[1] >= c.took[0]+c.took[2]+10*time.Millisecond || !strings.HasPrefix(c.String(), "observe=") {
		t.Fatalf("stages %q: %v", c.String(), c.took)
	}
}
