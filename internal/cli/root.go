// Package cli is the arbor command: one file per command, each with an options
// struct and a run function; libraries do the work.
package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/arborlog/arbor/internal/termtext"
	"github.com/spf13/cobra"
)

// Main runs the arbor command with args and returns its exit status.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	ios := newIO(in, out, errOut)
	root := newRoot(ios)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	cmd, err := root.ExecuteC()
	if err != nil {
		msg := err.Error()
		if !errors.As(err, new(usageError)) && isFlagError(msg) {
			err = usageError{err}
		}
		// Errors quote ids, names and paths from session files: print them safely.
		fmt.Fprintf(errOut, "arbor: %s\n", termtext.Line(oneLine(msg)))
		if errors.As(err, new(usageError)) && cmd != nil {
			fmt.Fprintf(errOut, "Run 'arbor %s --help' for usage.\n", strings.TrimPrefix(cmd.CommandPath(), "arbor "))
		}
		return exitCode(err)
	}
	return 0
}

// isFlagError recognises cobra's own usage errors, which it returns as plain errors.
func isFlagError(msg string) bool {
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument", "unknown command", "accepts ", "requires at least", "requires at most", "if any flags in the group", "none of the others can be", "bad flag syntax"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Global holds the flags every command takes.
type Global struct {
	SessionDir string
	All        bool
	JSON       bool
}

func newRoot(ios *IO) *cobra.Command {
	g := &Global{}
	root := &cobra.Command{
		Use:   "arbor",
		Short: "Show, search and edit coding-agent sessions",
		Long: `arbor is the session engine for coding agents. It reads and writes the pi
coding agent's session files (JSONL, format v3; older versions are migrated in
memory), so it works on the sessions you already have.

A <session> is a path, a session id, a unique id prefix or a session name.
Ids and names are looked up in --session-dir, else in the current project's
sessions, else everywhere.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.SessionDir, "session-dir", "", "look for sessions in this folder")
	root.PersistentFlags().BoolVar(&g.JSON, "json", false, "print JSON for scripts")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	for _, add := range commands {
		root.AddCommand(add(ios, g))
	}
	for _, c := range root.Commands() {
		refuseUnknownSubcommands(c)
	}
	return root
}

// refuseUnknownSubcommands makes a command that only groups others (arbor
// cursor) fail with a usage error on a subcommand it does not have; cobra
// would print its help and exit 0.
func refuseUnknownSubcommands(c *cobra.Command) {
	if !c.HasSubCommands() {
		return
	}
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if c.Run != nil || c.RunE != nil {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		var names []string
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		return usagef("unknown command %q for %q: want one of %s", args[0], c.CommandPath(), strings.Join(names, ", "))
	}
}

// commands lists the constructors of every subcommand; each command file adds itself.
var commands []func(*IO, *Global) *cobra.Command

func register(f func(*IO, *Global) *cobra.Command) bool {
	commands = append(commands, f)
	return true
}
