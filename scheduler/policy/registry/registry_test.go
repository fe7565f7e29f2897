package registry

import (
	"strings"
	"testing"
)

func TestNamesBuild(t *testing.T) {
	names := Names()
	if len(names) < len(Orderings())*(1+len(Placements())) {
		t.Fatalf("names %v", names)
	}
	for _, n := range names {
		p, err := New(n, Config{})
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if !strings.Contains(n, "+") && !strings.HasPrefix(p.Name(), n+"+") {
			t.Errorf("%s built %s", n, p.Name())
		}
		if strings.Contains(n, "+") && p.Name() != n {
			t.Errorf("%s built %s", n, p.Name())
		}
	}
}

func TestUnknownNameListsValidOnes(t *testing.T) {
	for _, n := range []string{"lottery", "fifo+random", "", "+consolidated"} {
		_, err := New(n, Config{})
		if err == nil || !strings.Contains(err.Error(), "tiresias-las") || !strings.Contains(err.Error(), "consolidated") {
			t.Errorf("%q: error %v should list valid names", n, err)
		}
	}
}

func TestBadKnobIsAnError(t *testing.T) {
	cfg := Config{}
	cfg.Queues.Queues = 9
	if _, err := New("tiresias-las", cfg); err == nil {
		t.Fatal("9 queues with 3 limits must fail")
	}
}
