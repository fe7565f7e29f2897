// Command caravan is Caravan's operator CLI. Each subcommand is one row of
// the commands table; adding one is a one-line change.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{
	"sim": {"replay job traces against scheduling policies (run, compare, bench, policies)", runSim},
}

func main() {
	if err := dispatch(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "caravan:", err)
		os.Exit(1)
	}
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return fmt.Errorf("no command")
		}
		return nil
	}
	c, ok := commands[args[0]]
	if !ok {
		usage(stderr)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: caravan <command> [arguments]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}
