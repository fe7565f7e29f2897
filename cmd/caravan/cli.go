package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/cli"
)

// subcommands are the nested tables of commands that have them, so that
// `caravan sim run -h` and `caravan help sim run` reach "sim run".
var subcommands = map[string]map[string]command{
	"sim":      simCommands,
	"colocate": colocateCommands,
	"tune":     tuneCommands,
	"serve":    serveCommands,
}

// errUnknown is returned for a command that is not in the table.
var errUnknown = errors.New("unknown command")

// dispatch runs the command args name through hashicorp/cli, which gives
// every command and subcommand -h, -help and --help; `help X` is rewritten
// to `X -h`.
func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "help" {
		args = append(append([]string{}, args[1:]...), "-h")
	}
	if len(args) > 1 && ownSubcommand(args) {
		// A command with its own subcommand table not listed above: it
		// answers `X sub -h` itself, which cli would answer with X's help.
		err := commands[args[0]].run(args[1:], stdout, stderr)
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	var runErr error
	c := &cli.CLI{
		Name:        "caravan",
		Args:        args,
		Commands:    cliCommands(stdout, stderr, &runErr),
		HelpFunc:    helpFunc,
		HelpWriter:  stdout,
		ErrorWriter: stderr,
	}
	code, err := c.Run()
	switch {
	case err != nil:
		return err
	case runErr != nil:
		return runErr
	case code == 127 && len(args) == 0:
		return errors.New("no command")
	case code == 127:
		return fmt.Errorf("%w %q", errUnknown, strings.Join(args, " "))
	case code != 0:
		return fmt.Errorf("exit status %d", code)
	}
	return nil
}

// cliCommands adapts the commands table (and subcommand tables) to
// hashicorp/cli. A command's error is kept in *runErr, so main prints it.
func cliCommands(stdout, stderr io.Writer, runErr *error) map[string]cli.CommandFactory {
	out := map[string]cli.CommandFactory{}
	add := func(name string, c command) {
		out[name] = func() (cli.Command, error) {
			return &adapter{name: name, c: c, stdout: stdout, stderr: stderr, err: runErr}, nil
		}
	}
	for name, c := range commands {
		add(name, c)
		for sub, sc := range subcommands[name] {
			add(name+" "+sub, sc)
		}
	}
	return out
}

// adapter is one table row as a cli.Command.
type adapter struct {
	name           string
	c              command
	stdout, stderr io.Writer
	err            *error
}

func (a *adapter) Synopsis() string { return a.c.summary }

// Help is what the command prints for -h: every command parses its flags
// before doing anything, so asking it for -h is safe and keeps one source
// of truth for its usage.
func (a *adapter) Help() string {
	var b bytes.Buffer
	err := a.c.run([]string{"-h"}, &b, &b)
	if b.Len() == 0 && err != nil && !errors.Is(err, flag.ErrHelp) {
		return fmt.Sprintf("usage: caravan %s\n\n%s", a.name, a.c.summary)
	}
	h := strings.TrimRight(b.String(), "\n")
	if _, nested := subcommands[a.name]; nested {
		h, _, _ = strings.Cut(h, "\n") // cli lists the subcommands itself
	}
	return h
}

func (a *adapter) Run(args []string) int {
	if err := a.c.run(args, a.stdout, a.stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		*a.err = err
		return 1
	}
	return 0
}

// helpFunc lists the commands, one line each.
func helpFunc(cs map[string]cli.CommandFactory) string {
	var b strings.Builder
	b.WriteString("usage: caravan <command> [arguments]   (caravan help <command> for its flags)\n\ncommands:\n")
	names := make([]string, 0, len(cs))
	for n := range cs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c, err := cs[n]()
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "  %-12s %s\n", n, c.Synopsis())
	}
	return strings.TrimRight(b.String(), "\n")
}

// ownSubcommand reports a known command, not in subcommands, called with a
// word (not a flag) after it: a subcommand it dispatches itself.
func ownSubcommand(args []string) bool {
	_, known := commands[args[0]]
	_, nested := subcommands[args[0]]
	return known && !nested && !strings.HasPrefix(args[1], "-")
}
