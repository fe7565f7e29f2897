package registry

import (
	"sort"
	"strconv"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/caravan-dl/caravan/scheduler/policy/order"
)

// extraOrderings need configuration the zero Config lacks (a Gittins
// prior), so, like extraPlacements, they are not in Names().
var extraOrderings = map[string]ordering{
	// 2D-Gittins with the reference simulator's rules (order.GittinsRef).
	"tiresias-gittins-ref": {build: func(c Config) (policy.Orderer, error) {
		return order.NewGittinsRef(order.GittinsConfig{QueueConfig: c.Queues, Prior: c.GittinsPrior, Delta: c.GittinsDelta})
	}, placement: "consolidated"},
}

// ExtraOrderings lists orderings that build only with extra configuration.
func ExtraOrderings() []string { return sortedKeys(extraOrderings) }

// alias is a name of the Tiresias reference simulator (run_sim.py
// --schedule) for the Caravan ordering that follows its rules.
type alias struct {
	to   string
	knob float64 // the starvation knob its name carries (dlas-gpu-N)
}

// aliases: a checker using the reference's names gets the reference's
// rules. Its "fifo" (with --scheme=yarn) is Caravan's fifo already.
var aliases = map[string]alias{
	"dlas-gpu":           {to: "tiresias-las-mlfq"},
	"dlas-gpu-05":        {to: "tiresias-las-mlfq", knob: 0.5},
	"dlas-gpu-1":         {to: "tiresias-las-mlfq", knob: 1},
	"dlas-gpu-2":         {to: "tiresias-las-mlfq", knob: 2},
	"dlas-gpu-4":         {to: "tiresias-las-mlfq", knob: 4},
	"dlas-gpu-8":         {to: "tiresias-las-mlfq", knob: 8},
	"dlas-gpu-10":        {to: "tiresias-las-mlfq", knob: 10},
	"dlas-gpu-100":       {to: "tiresias-las-mlfq", knob: 100},
	"dlas-gpu-gittins":   {to: "tiresias-gittins-ref"},
	"dlas-gpu-gittins-1": {to: "tiresias-gittins-ref", knob: 1},
	"dlas-gpu-gittins-2": {to: "tiresias-gittins-ref", knob: 2},
	"dlas-gpu-gittins-4": {to: "tiresias-gittins-ref", knob: 4},
	"dlas-gpu-gittins-8": {to: "tiresias-gittins-ref", knob: 8},
}

// Aliases maps each reference simulator name to what it builds, e.g.
// "dlas-gpu-2" → "tiresias-las-mlfq (promote knob 2)".
func Aliases() map[string]string {
	out := make(map[string]string, len(aliases))
	for n, a := range aliases {
		out[n] = a.to
		if a.knob > 0 {
			out[n] += " (promote knob " + strconv.FormatFloat(a.knob, 'g', -1, 64) + ")"
		}
	}
	return out
}

// AliasNames lists the reference simulator's names, sorted.
func AliasNames() []string {
	out := sortedKeys(aliases)
	sort.Strings(out)
	return out
}

// lookup resolves an ordering name, following reference aliases (whose
// starvation knob, if any, overrides cfg's).
func lookup(name string, cfg *Config) (ordering, bool) {
	if a, ok := aliases[name]; ok {
		name = a.to
		if a.knob > 0 {
			cfg.Queues.PromoteKnob = a.knob
		}
	}
	if o, ok := orderings[name]; ok {
		return o, true
	}
	o, ok := extraOrderings[name]
	return o, ok
}
