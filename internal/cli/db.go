package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/pgstore"
)

// needDatabase opens the database store, which these commands require.
func (g *Global) needDatabase() (*pgstore.Store, error) {
	db, err := g.database()
	if err != nil {
		return nil, err
	}
	if db == nil {
		return nil, usagef("this command works on a database: give --store postgres://… or set ARBOR_STORE")
	}
	return db, nil
}

func newCmdDB(ios *IO, g *Global) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db",
		Short: "Manage the PostgreSQL session store",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "migrate",
		Short: "Bring the database's schema up to date",
		Long: `Create arbor's tables in the database named by --store or $ARBOR_STORE,
or bring them up to date. Every command does this when it connects; this one
does only that, and says which schema version the database had and has
(0 for a new database). --json prints {"from","to"}.`,
		Example: `  arbor db migrate --store postgres://arbor@db.internal/sessions`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			db, err := g.needDatabase()
			if err != nil {
				return err
			}
			from, to, err := db.Migrate()
			if err != nil {
				return err
			}
			if g.JSON {
				return ios.JSON(map[string]int{"from": from, "to": to})
			}
			switch {
			case from == 0:
				ios.Printf("%s: created arbor's schema, version %d\n", db.Name(), to)
			case from < to:
				ios.Printf("%s: migrated arbor's schema from version %d to %d\n", db.Name(), from, to)
			default:
				ios.Printf("%s: arbor's schema is at version %d, already up to date\n", db.Name(), to)
			}
			return nil
		},
	})
	return cmd
}

func newCmdSync(ios *IO, g *Global) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Copy sessions between files and the database",
		Long: `push copies the session files in scope (this project's, --all, or
--session-dir) into the database named by --store or $ARBOR_STORE; pull
copies the database's sessions of this project (or --all) into files where
pi finds them ($ARBOR_DIR/sessions/<project folder>), or into the file a
session already has; with --session-dir, every session goes into that
folder's project folders.

Both are idempotent and incremental: a session the other side lacks is
copied whole, one it has gets the entries it lacks, and one whose two copies
both have entries the other lacks is reported and left alone. A session open
for writing on the receiving side is skipped with its holder named.
--json prints [{"id","path","created","added"}].`,
		Example: `  arbor sync push --all --store postgres://arbor@db.internal/sessions
  ARBOR_STORE=postgres://arbor@db.internal/sessions arbor sync pull`,
		Args: cobra.NoArgs,
	}
	push := &cobra.Command{
		Use:   "push",
		Short: "Copy session files into the database",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			db, infos, err := syncSides(ios, g, g.scope())
			if err != nil {
				return err
			}
			var res []pgstore.SyncResult
			failed := 0
			for _, in := range infos {
				r, err := db.PushFile(in.Path)
				if err != nil {
					ios.Warnf("%v", err)
					failed++
					continue
				}
				res = append(res, r)
			}
			return report(ios, g, "pushed", res, failed)
		},
	}
	pull := &cobra.Command{
		Use:   "pull",
		Short: "Copy the database's sessions into files",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			db, files, err := syncSides(ios, g, catalog.Scope{All: true, Dir: g.SessionDir})
			if err != nil {
				return err
			}
			have := map[string]string{}
			for _, in := range files {
				have[in.ID] = in.Path
			}
			hs, err := db.Sessions(context.Background())
			if err != nil {
				return err
			}
			root := g.SessionDir
			if root == "" {
				root = catalog.SessionsRoot()
			}
			sc := g.scope()
			var res []pgstore.SyncResult
			failed := 0
			for _, h := range hs {
				if !g.All && g.SessionDir == "" && h.Cwd != sc.Cwd {
					continue
				}
				path, ok := have[h.ID]
				if !ok {
					if path, err = pgstore.PullPath(root, h); err != nil {
						ios.Warnf("pull %s: %v", h.ID, err)
						failed++
						continue
					}
				}
				r, err := db.Pull(h.ID, path)
				if err != nil {
					ios.Warnf("pull %s: %v", h.ID, err)
					failed++
					continue
				}
				res = append(res, r)
			}
			return report(ios, g, "pulled", res, failed)
		},
	}
	addAllFlag(push, g)
	addAllFlag(pull, g)
	cmd.AddCommand(push, pull)
	return cmd
}

// syncSides opens the database and lists the session files in scope, empty
// and archived ones too: the two sides of a sync.
func syncSides(ios *IO, g *Global, scope catalog.Scope) (*pgstore.Store, []catalog.Info, error) {
	db, err := g.needDatabase()
	if err != nil {
		return nil, nil, err
	}
	cat := g.catalog(ios)
	defer cat.Close()
	infos, err := cat.List(scope, catalog.ListOptions{Empty: true, Archived: true})
	return db, infos, err
}

// report prints what a sync did, and fails when a session could not be copied.
func report(ios *IO, g *Global, verb string, res []pgstore.SyncResult, failed int) error {
	if g.JSON {
		if res == nil {
			res = []pgstore.SyncResult{}
		}
		if err := ios.JSON(res); err != nil {
			return err
		}
	} else {
		copied := 0
		for _, r := range res {
			if r.Added == 0 && !r.Created {
				continue
			}
			copied++
			what := "entries added"
			if r.Created {
				what = "entries, new"
			}
			ios.Printf("%s %s: %d %s (%s)\n", verb, r.ID, r.Added, what, r.Path)
		}
		switch n := len(res); {
		case n == 0 && failed > 0:
			// Nothing copied, and the error says why.
		case n == 0:
			ios.Printf("%s nothing: no sessions in scope\n", verb)
		case copied == n:
			ios.Printf("%s %s\n", verb, sessions(n))
		case copied == 0:
			ios.Printf("%s nothing: %s already up to date\n", verb, sessions(n))
		default:
			ios.Printf("%s %d of %s; the other %d were up to date\n", verb, copied, sessions(n), n-copied)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d sessions could not be copied (see above)", failed)
	}
	return nil
}

func sessions(n int) string {
	if n == 1 {
		return "1 session"
	}
	return fmt.Sprintf("%d sessions", n)
}

// dbError words an error met while connecting to the database store: where
// arbor tried, what happened, and what to do, once and on one line.
func dbError(err error) error {
	var ce *pgstore.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	where := fmt.Sprintf("cannot connect to PostgreSQL at %s (store %s)", ce.Addr, ce.Store)
	var pg *pgconn.PgError
	switch {
	case errors.Is(ce.Err, pgstore.ErrRefused):
		return fmt.Errorf("%s: connection refused (no server listens there); start it, or correct the host and port in --store or $ARBOR_STORE", where)
	case errors.Is(ce.Err, pgstore.ErrNoHost):
		return fmt.Errorf("%s: no such host; correct the host in --store or $ARBOR_STORE", where)
	case errors.Is(ce.Err, pgstore.ErrNoAnswer):
		return fmt.Errorf("%s: no answer in time; check the host, the port and the network, or raise connect_timeout in the URL", where)
	case errors.As(ce.Err, &pg) && (pg.Code == "28P01" || pg.Code == "28000"):
		return fmt.Errorf("%s: the server refused the login: %s; check the user and password (in the URL, $PGPASSWORD or ~/.pgpass)", where, pg.Message)
	case errors.As(ce.Err, &pg) && pg.Code == "3D000":
		return fmt.Errorf("%s: %s; create it first (createdb), or name another database in the URL", where, pg.Message)
	case errors.As(ce.Err, &pg):
		return fmt.Errorf("%s: the server said: %s", where, pg.Message)
	}
	return fmt.Errorf("%s: %v", where, ce.Err)
}
