// Package cli is the arbor command: one file per command, each with an options
// struct and a run function; libraries do the work.
package cli

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/arborlog/arbor/internal/termtext"
	"github.com/spf13/cobra"

	"github.com/arborlog/arbor/pgstore"
)

// Main runs the arbor command with args and returns its exit status.
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	return run(newIO(in, out, errOut), args)
}

// run runs the arbor command on ios: the one place errors are printed.
func run(ios *IO, args []string) int {
	root, g := newRoot(ios)
	defer g.closeStore()
	root.SetArgs(args)
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	cmd, err := root.ExecuteC()
	if err != nil {
		if !errors.As(err, new(usageError)) && isFlagError(err.Error()) {
			err = usageError{err}
		}
		// Errors quote ids, names and paths from session files: print them safely.
		fmt.Fprintf(ios.ErrOut, "arbor: %s\n", termtext.Line(errorText(err)))
		if errors.As(err, new(usageError)) && cmd != nil {
			fmt.Fprintf(ios.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return exitCode(err)
	}
	return 0
}

// libPrefix is the package name a library error starts with ("session: entry
// not found"), at the start or after a wrapping "context: ".
var libPrefix = regexp.MustCompile(`(^|: )(?:session|jsonl|catalog|compaction|window|blob|export|importers|pgstore|redact|agent|exact): `)

// errorText is err as a user reads it: one line, without the library
// package names that help a programmer but say nothing to a user.
func errorText(err error) string {
	s := oneLine(err.Error())
	for { // "compaction: window: ..." nests
		t := libPrefix.ReplaceAllString(s, "$1")
		if t == s {
			return s
		}
		s = t
	}
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
	Store      string // --store: "files" or a postgres:// URL ("" for $ARBOR_STORE)

	db *pgstore.Store // the database store, once opened
}

func newRoot(ios *IO) (*cobra.Command, *Global) {
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
	root.PersistentFlags().StringVar(&g.Store, "store", "", "where sessions are kept: files (the default) or a postgres:// URL (default $ARBOR_STORE)")
	root.Version = readBuildVersion().String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	for _, add := range commands() {
		root.AddCommand(add(ios, g))
	}
	for _, c := range root.Commands() {
		refuseUnknownSubcommands(c)
	}
	refuseDatabase(root, g)
	addAgentFlags(root, ios, g)
	return root, g
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

// commands is every subcommand, in one list: the help, the README and the
// tests (TestCommandList) read it from here.
func commands() []func(*IO, *Global) *cobra.Command {
	resolution := func(verb string) func(*IO, *Global) *cobra.Command {
		return func(ios *IO, g *Global) *cobra.Command { return newCmdResolution(ios, g, verb) }
	}
	return []func(*IO, *Global) *cobra.Command{
		// Reading sessions.
		newCmdLs, newCmdLatest, newCmdSearch, newCmdInfo, newCmdTree, newCmdShow,
		newCmdContext, newCmdStats, newCmdBlob, newCmdBrowse, newCmdExport,
		// Editing a session.
		newCmdAppend, newCmdBranch, newCmdRewind, newCmdCursor, newCmdLabel, newCmdName, newCmdRename,
		resolution("pin"), resolution("unpin"), resolution("outline"), resolution("summarize"),
		newCmdEdit, newCmdCompact, newCmdFork,
		// Managing session files.
		newCmdArchive, newCmdUnarchive, newCmdRm, newCmdMv, newCmdRestore, newCmdFsck, newCmdImport, newCmdIndex,
		// Stores and servers.
		newCmdDB, newCmdSync, newCmdServe,
		newCmdVersion,
	}
}

// closeStore closes the database store, if a command opened it.
func (g *Global) closeStore() {
	if g.db != nil {
		g.db.Close()
		g.db = nil
	}
}
