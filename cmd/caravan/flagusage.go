package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// testingOnly marks a flag's usage: such flags work but stay out of help.
const testingOnly = "testing only: "

// setUsage makes fs print synopsis, then its flags without the testing-only
// ones, to w.
func setUsage(fs *flag.FlagSet, w io.Writer, synopsis string) {
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintf(w, "usage: %s\n\nflags:\n", synopsis)
		fs.VisitAll(func(f *flag.Flag) {
			if strings.HasPrefix(f.Usage, testingOnly) {
				return
			}
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "  -%s", f.Name)
			if name != "" {
				fmt.Fprintf(w, " %s", name)
			}
			fmt.Fprintf(w, "\n    \t%s", strings.ReplaceAll(usage, "\n", "\n    \t"))
			if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" && f.DefValue != "0s" {
				fmt.Fprintf(w, " (default %q)", f.DefValue)
			}
			fmt.Fprintln(w)
		})
	}
}
