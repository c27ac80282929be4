// Package cli is the arbor command: one file per command, each with an options
// struct and a run function; libraries do the work.
package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

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
		fmt.Fprintf(errOut, "arbor: %s\n", oneLine(msg))
		if errors.As(err, new(usageError)) && cmd != nil {
			fmt.Fprintf(errOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
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
		Short: "A coding agent, and the engine for its sessions: show, search and edit them",
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
	addAgentFlags(root, ios, g)
	return root
}

// commands lists the constructors of every subcommand; each command file adds itself.
var commands []func(*IO, *Global) *cobra.Command

func register(f func(*IO, *Global) *cobra.Command) bool {
	commands = append(commands, f)
	return true
}
