package trace

import (
	"fmt"
	"strings"
)

// OpenOptions are the knobs shared by all formats.
type OpenOptions struct {
	VC      string // Philly virtual cluster filter
	RoundUp bool   // Alibaba: whole GPUs instead of fractions
}

// Kinds lists the formats Open understands.
var Kinds = []string{"philly", "tiresias", "alibaba"}

// Open loads a trace named "kind:path", e.g. "philly:traces/philly/philly_jobs.csv".
func Open(spec string, opt OpenOptions) (*Trace, error) {
	kind, path, ok := strings.Cut(spec, ":")
	if !ok || path == "" {
		return nil, fmt.Errorf("trace %q: want kind:path with kind one of %s", spec, strings.Join(Kinds, ", "))
	}
	switch kind {
	case "philly":
		return LoadPhilly(path, PhillyOptions{VC: opt.VC})
	case "tiresias":
		return LoadTiresias(path)
	case "alibaba":
		tr, _, err := LoadAlibabaPods(path, AlibabaOptions{RoundUp: opt.RoundUp})
		return tr, err
	default:
		return nil, fmt.Errorf("trace %q: unknown kind %q (want one of %s)", spec, kind, strings.Join(Kinds, ", "))
	}
}
