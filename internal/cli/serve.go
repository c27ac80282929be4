package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/export"
	"github.com/arborlog/arbor/internal/termtext"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arborlog/arbor/rpc"
	"github.com/arborlog/arbor/session"
)

func newCmdServe(ios *IO, g *Global) *cobra.Command {
	o := &agentOptions{io: ios, g: g}
	var listen string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Drive sessions and the agent over JSON-RPC 2.0 on stdin/stdout",
		Long: `Speak JSON-RPC 2.0 on stdin and stdout, one JSON value a line, with rho's
method names and result shapes (prompt, abort, clear, compact, getState,
getMessages, setModel, getSessionStats, listSessions, resumeSession,
newSession, fork, listBranches, switchBranch, listModels, listTools) and
arbor's own (getEntries, getTree, branchTo, label, setSessionName, pin,
unpin, setResolution, compactUndo, search, exportHtml, fsck, rm, restore).
docs/openrpc.json describes every method; docs/rpc.md has an example.

The server starts on a new session (written with its first prompt) and sends
a "ready" notification; while a prompt runs it streams agent/start,
message/delta, reasoning/delta, tool/call, tool/result, usage and agent/end.
abort and prompt{steer:true} are served while a prompt runs; other methods
that touch the session answer -32603 with data.reason "busy".

resumeSession{path, readOnly:true} follows a session another program writes:
getEntries{since} then returns what was appended after the entry since.
A session another writer holds is refused with the holder named.

With --listen unix:PATH it serves several clients at once, each on its own
session, until Ctrl-C. The socket is made 0600, and its folder must be one
only you can enter (mkdir -m 700 DIR).

With --listen tcp:127.0.0.1:PORT (loopback only) a client's first request
must be authenticate{token}; anything else is answered -32001 and the
connection closed. The token is $ARBOR_SERVE_TOKEN when set, else a new
random one written (mode 0600) to $ARBOR_DIR/serve-tcp-HOST-PORT.token,
whose path is printed on stderr and which is removed when the server stops.

A request line longer than --max-request-bytes (64 MiB) is answered with
error -32600 (data.reason "tooLarge", its id when the line gave one) and
not read; the next line is served. A last request without its newline is
served.

Files that requests name by path (exportHtml's outputPath, resumeSession's
path) must be in the project (the current folder), the sessions folders
($ARBOR_DIR/sessions, pi's, --session-dir) or a folder given with
--allow-path; others are refused with -32602. A file that is not a session
(no session header, empty) is never opened as one, nor written.

The model flags are those of arbor -p.`,
		Example: `  echo '{"jsonrpc":"2.0","id":1,"method":"listSessions"}' | arbor serve`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			cfg, closeStore, err := o.rpcConfig(c)
			if err != nil {
				return err
			}
			defer closeStore()
			if listen == "" {
				return rpc.Serve(cfg, o.io.In, nopCloser{o.io.Out})
			}
			ctx, stop := interruptible(context.Background())
			defer stop()
			lo := rpc.ListenOptions{Token: os.Getenv(tokenEnv)}
			tcp := strings.HasPrefix(listen, "tcp:")
			generated := tcp && lo.Token == ""
			if generated {
				if lo.Token, err = rpc.NewToken(); err != nil {
					return err
				}
			}
			var (
				tokenFile string
				tokenErr  error
			)
			defer func() {
				if tokenFile != "" {
					removeToken(tokenFile, lo.Token)
				}
			}()
			lo.Ready = func(a net.Addr) {
				fmt.Fprintf(o.io.ErrOut, "listening on %s:%s\n", a.Network(), termtext.Line(a.String()))
				switch {
				case generated:
					p, werr := writeToken(a, lo.Token)
					if werr != nil {
						tokenErr = fmt.Errorf("write the token file: %w (or set $%s)", werr, tokenEnv)
						stop()
						return
					}
					tokenFile = p
					fmt.Fprintf(o.io.ErrOut, "token in %s: send authenticate{token} first\n", termtext.Line(p))
				case tcp:
					fmt.Fprintf(o.io.ErrOut, "token from $%s: send authenticate{token} first\n", tokenEnv)
				}
			}
			err = rpc.Listen(ctx, cfg, listen, lo)
			if tokenErr != nil {
				return tokenErr
			}
			var re *rpc.Error
			if errors.As(err, &re) && re.Kind == rpc.BadParams {
				return usagef("%s", re.Msg)
			}
			return err
		},
	}
	modelFlags(cmd.Flags(), o)
	rpcFlags(cmd.Flags(), o)
	cmd.Flags().StringVar(&listen, "listen", "", "serve several clients on unix:PATH or tcp:127.0.0.1:PORT (each its own session, tcp with a token) until Ctrl-C")
	return cmd
}

// rpcFlags are the flags of both RPC doors: arbor serve and --mode rpc.
func rpcFlags(f *pflag.FlagSet, o *agentOptions) {
	f.IntVar(&o.maxRequest, "max-request-bytes", rpc.DefaultMaxRequestBytes, "RPC: the longest request line read; a longer one is answered with an error")
	f.StringArrayVar(&o.allowPaths, "allow-path", nil, "RPC: a folder whose files requests may name (export, open a session by path), besides the project and the sessions folders (repeatable)")
}

// tokenEnv names the variable that gives arbor serve --listen tcp: its token.
const tokenEnv = "ARBOR_SERVE_TOKEN"

// writeToken writes a generated token where the user can read it and
// nobody else can: $ARBOR_DIR/serve-tcp-HOST-PORT.token, mode 0600 (a file
// left by a server that did not stop cleanly is replaced).
func writeToken(a net.Addr, token string) (string, error) {
	home := catalog.Home()
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", err
	}
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "", err
	}
	p := filepath.Join(home, "serve-tcp-"+strings.ReplaceAll(host, ":", "_")+"-"+port+".token")
	tmp, err := os.CreateTemp(home, ".token-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(token + "\n"); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return p, os.Rename(tmp.Name(), p)
}

// removeToken removes the token file p if it still holds this server's token.
func removeToken(p, token string) {
	if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == token {
		_ = os.Remove(p)
	}
}

// exportHTML writes the session's page to the new file out ("" for the
// default name in the current folder), as arbor export does.
func exportHTML(l *session.Log, ref, out string) (string, error) {
	abs, err := filepath.Abs(ref)
	if err != nil {
		return "", err
	}
	p, _, err := exportFile(l, ref, out, export.FormatHTML, export.Options{Source: abs}, false, ref)
	return p, err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// rpcConfig is what arbor serve and arbor --mode rpc give the engine: the
// store, the project and the agent built from the flags.
func (o *agentOptions) rpcConfig(c *cobra.Command) (rpc.Config, func(), error) {
	mk, err := o.factory(c)
	if err != nil {
		return rpc.Config{}, nil, err
	}
	st, err := o.g.sessions(o.io)
	if err != nil {
		return rpc.Config{}, nil, err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return rpc.Config{}, nil, err
	}
	return rpc.Config{Store: st, Scope: o.g.scope(), Cwd: cwd, Where: o.g.SessionDir, NewAgent: mk, Models: o.models,
			MaxRequestBytes: o.maxRequest, Allow: o.allowPaths,
			Fork: o.g.forkSession, Export: exportHTML, Opening: func(ref string) { boundHeap(fileSize(ref)) }},
		func() { _ = st.Close() }, nil
}
