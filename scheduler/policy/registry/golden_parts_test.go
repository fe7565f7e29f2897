package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/caravan-dl/caravan/scheduler/policy"
)

// goldenValue is a decision's digest followed by per-part digests and
// counts ("p2:1a2b,s5:3c4d,w40:5e6f" for preempts, starts, waiting), so a
// changed digest can say which kind of decision changed.
func goldenValue(d policy.Decision) string {
	pre := partDigest(func(b *strings.Builder) {
		for _, id := range d.Preempts {
			fmt.Fprintf(b, "P %s\n", id)
		}
	})
	st := partDigest(func(b *strings.Builder) {
		for _, s := range d.Starts {
			fmt.Fprintf(b, "S %s %v\n", s.JobID, s.Placement.Slots)
		}
	})
	w := d.Waiting.Map()
	wt := partDigest(func(b *strings.Builder) {
		for _, id := range sortedKeys(w) {
			fmt.Fprintf(b, "W %s %s\n", id, w[id])
		}
	})
	return fmt.Sprintf("%s p%d:%s,s%d:%s,w%d:%s", digest(d), len(d.Preempts), pre, len(d.Starts), st, len(w), wt)
}

func partDigest(write func(*strings.Builder)) string {
	var b strings.Builder
	write(&b)
	h := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(h[:3])
}

// explainChange names the parts of a golden value that differ, e.g.
// "starts changed (5 → 4), waiting reasons changed (40 → 41)".
func explainChange(want, got string) string {
	wp, gp := goldenParts(want), goldenParts(got)
	if wp == nil || gp == nil {
		return "digest " + got + ", golden " + want
	}
	var out []string
	for i, name := range []string{"preemptions", "starts", "waiting reasons"} {
		if wp[i] != gp[i] {
			out = append(out, fmt.Sprintf("%s changed (%s → %s)", name, count(wp[i]), count(gp[i])))
		}
	}
	if len(out) == 0 {
		return "digest " + got + ", golden " + want
	}
	return strings.Join(out, ", ")
}

// goldenParts splits "digest pN:h,sN:h,wN:h" into its three parts.
func goldenParts(v string) []string {
	_, parts, ok := strings.Cut(v, " ")
	if !ok {
		return nil
	}
	ps := strings.Split(parts, ",")
	if len(ps) != 3 {
		return nil
	}
	return ps
}

// count is the count of a part "s5:3c4d" (5), with its letter stripped.
func count(part string) string {
	n, _, _ := strings.Cut(part, ":")
	if len(n) > 0 {
		n = n[1:]
	}
	return n
}
