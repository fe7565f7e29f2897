package registry

import (
	"strings"
	"testing"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// The reference simulator's schedule names build the orderings that
// follow its rules; the Gittins one needs a prior.
func TestReferenceAliases(t *testing.T) {
	cfg := Config{GittinsPrior: []float64{100, 1000}}
	for alias, want := range map[string]string{
		"dlas-gpu":                "tiresias-las-mlfq+consolidated",
		"dlas-gpu-2":              "tiresias-las-mlfq+consolidated",
		"dlas-gpu-gittins":        "tiresias-gittins-ref+consolidated",
		"dlas-gpu-gittins-4+yarn": "tiresias-gittins-ref+yarn",
		"tiresias-gittins-ref":    "tiresias-gittins-ref+consolidated",
		"dlas-gpu+network-aware":  "tiresias-las-mlfq+network-aware",
	} {
		p, err := New(alias, cfg)
		if err != nil {
			t.Fatalf("%s: %v", alias, err)
		}
		if p.(*policy.Framework).Name() != want {
			t.Errorf("%s built %s, want %s", alias, p.Name(), want)
		}
	}
	if _, err := New("dlas-gpu-gittins", Config{}); err == nil || !strings.Contains(err.Error(), "prior") {
		t.Fatalf("no prior: %v, want an error naming the prior", err)
	}
	if got := Aliases()["dlas-gpu-05"]; got != "tiresias-las-mlfq (promote knob 0.5)" {
		t.Errorf("alias text %q", got)
	}
	for _, n := range Names() {
		if _, ok := aliases[strings.SplitN(n, "+", 2)[0]]; ok {
			t.Errorf("alias %s listed in Names(): the golden digests pin only Caravan's names", n)
		}
	}
}
