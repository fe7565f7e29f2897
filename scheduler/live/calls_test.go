package live

import "testing"

// The API call counter sees every request a round makes: a full
// reconcile's lists, then none for a round fed by events.
func TestRoundCountsItsAPICalls(t *testing.T) {
	s, f := observeScheduler(t)
	if _, err := s.observe(); err != nil {
		t.Fatal(err)
	}
	if got, want := s.calls, int(f.requests.Load()); got != want || want == 0 {
		t.Fatalf("counted %d calls, Nomad served %d", got, want)
	}
	if got := count(s.metrics.apiCalls); got != float64(s.calls) {
		t.Fatalf("caravan_scheduler_api_calls_total = %v, want %d", got, s.calls)
	}
	s.calls = 0
	before := f.requests.Load()
	if _, err := s.observe(); err != nil || s.calls != 0 || f.requests.Load() != before {
		t.Fatalf("an event-fed round: counted %d, Nomad served %d (%v)", s.calls, f.requests.Load()-before, err)
	}
}
