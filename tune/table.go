package tune

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable prints a tuning state: one row per trial that has started.
func WriteTable(w io.Writer, st *State) {
	t := st.Tuner
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "TRIAL\tCONFIG\tRUNG\t%s\tSTATUS\t%s\tJOB\n", strings.ToUpper(t.Spec.Budget.Unit), strings.ToUpper(t.Spec.Metric))
	for _, tr := range t.Trials {
		if tr.Status == Pending {
			continue
		}
		m := "-"
		if len(tr.Metrics) > 0 {
			m = fmt.Sprintf("%.4g", tr.Last())
		}
		job := ""
		if r := st.Runs[tr.ID]; r != nil {
			job = r.Job
		}
		status := string(tr.Status)
		if tr.Note != "" && tr.Status != Running {
			status += " (" + tr.Note + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%g\t%s\t%s\t%s\n", tr.ID, formatConfig(tr.Config), tr.Rung, tr.Budget, status, m, job)
	}
	tw.Flush()
}

// show prints the table when it changed.
func (ct *Controller) show() {
	var b strings.Builder
	WriteTable(&b, ct.st)
	if s := b.String(); s != ct.shown {
		ct.shown = s
		fmt.Fprintf(ct.cfg.Out, "\n%s (%s, spent %g of %s)\n%s", ct.st.Tuner.Spec.Name, ct.st.Tuner.Spec.Algorithm,
			ct.st.Tuner.Spent, budgetCap(ct.st.Tuner.Spec.Budget), s)
	}
}

func budgetCap(b Budget) string {
	if b.Total > 0 {
		return fmt.Sprintf("%g %s", b.Total, b.Unit)
	}
	return "no cap"
}

func formatConfig(c Config) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + c[k]
	}
	return strings.Join(parts, " ")
}

// WriteSummary prints one line for a tuning job: progress and best.
func WriteSummary(w io.Writer, name string, st *State) {
	t := st.Tuner
	counts := map[Status]int{}
	for _, tr := range t.Trials {
		counts[tr.Status]++
	}
	state := "running"
	if !st.Ended.IsZero() {
		state = "finished in " + st.Ended.Sub(st.Started).Round(time.Second).String()
	}
	best := "none yet"
	if b, ok := t.Best(); ok {
		best = fmt.Sprintf("trial %d %s %s=%.4g", b.ID, formatConfig(b.Config), t.Spec.Metric, b.Last())
	}
	fmt.Fprintf(w, "%s: %s, %s, %d trials (%d running, %d done, %d stopped, %d failed), spent %g %s; best %s\n",
		name, t.Spec.Algorithm, state, len(t.Trials), counts[Running], counts[Done], counts[Stopped], counts[Failed], t.Spent, t.Spec.Budget.Unit, best)
}
