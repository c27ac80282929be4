package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are applied in order, each once, in one transaction each; the
// number of those applied is arbor_schema.version. Never edit one that has
// shipped: add the next.
var migrations = []string{
	// 1: sessions (the header line, the listing record of SPEC §9 as columns,
	// and the fold that keeps it up to date), their entries (the raw line
	// beside the envelope), writers. Strings read from sessions are bytea:
	// JSON strings may hold what a text column refuses (NUL).
	`CREATE TABLE arbor_sessions (
		id             text PRIMARY KEY,
		header         bytea NOT NULL,
		entries        integer NOT NULL DEFAULT 0,
		size           bigint NOT NULL,
		updated_at     timestamptz NOT NULL DEFAULT now(),
		fold           bytea NOT NULL,
		listed         boolean NOT NULL,
		cwd            bytea NOT NULL,
		name           bytea NOT NULL,
		parent_session bytea NOT NULL,
		first_message  bytea NOT NULL,
		created_ms     bigint,
		modified_ms    bigint,
		messages       integer NOT NULL,
		entry_count    integer NOT NULL,
		archived       boolean NOT NULL DEFAULT false
	);
	CREATE INDEX arbor_sessions_modified ON arbor_sessions (modified_ms DESC NULLS LAST, id);
	CREATE INDEX arbor_sessions_cwd ON arbor_sessions (cwd, modified_ms DESC NULLS LAST, id);
	CREATE TABLE arbor_entries (
		session_id text NOT NULL REFERENCES arbor_sessions (id) ON DELETE CASCADE,
		position   integer NOT NULL,
		id         text NOT NULL,
		parent     text,
		type       text NOT NULL,
		timestamp  text NOT NULL,
		raw        bytea NOT NULL,
		text       text,
		lexemes    tsvector,
		PRIMARY KEY (session_id, position)
	);
	CREATE INDEX arbor_entries_lexemes ON arbor_entries USING gin (lexemes);
	CREATE INDEX arbor_entries_unindexed ON arbor_entries (session_id) WHERE text IS NOT NULL AND lexemes IS NULL;
	CREATE TABLE arbor_writers (
		session_id  text PRIMARY KEY,
		backend_pid integer NOT NULL,
		pid         integer NOT NULL,
		host        text NOT NULL,
		command     text NOT NULL,
		started     text NOT NULL
	);`,
	// 2: a writer records its program and its user, no longer its command
	// line: every role reads this table, and a command line holds --store
	// URLs with their passwords. Those recorded before are cut to their
	// program.
	`ALTER TABLE arbor_writers ADD COLUMN os_user text NOT NULL DEFAULT '';
	UPDATE arbor_writers SET command = regexp_replace(split_part(btrim(command), ' ', 1), '^.*/', '');`,
}

// SchemaVersion is the schema this arbor writes.
var SchemaVersion = len(migrations)

// migrateKey serializes migrations between processes (an advisory lock held
// for the transaction).
const migrateKey = 0x61726d6967726174 // "armigrat"

// Migrate brings the database's schema up to date and returns the versions
// before and after. A database newer than this arbor is refused.
func migrate(ctx context.Context, conn *pgx.Conn) (from, to int, err error) {
	// Up to date (the usual case): no lock, no DDL, so a role that may not
	// create tables works on a database someone else migrated.
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('arbor_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, 0, err
	}
	if exists {
		var v int
		if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM arbor_schema`).Scan(&v); err != nil {
			return 0, 0, err
		}
		if v == len(migrations) {
			return v, v, nil
		}
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateKey)); err != nil {
		return 0, 0, err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS arbor_schema (version integer NOT NULL)`); err != nil {
		return 0, 0, err
	}
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM arbor_schema`).Scan(&from); err != nil {
		return 0, 0, err
	}
	if from > len(migrations) {
		return from, from, fmt.Errorf("the database has arbor schema version %d; this arbor knows up to %d: upgrade arbor", from, len(migrations))
	}
	for v := from; v < len(migrations); v++ {
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return from, v, fmt.Errorf("schema migration %d: %w", v+1, err)
		}
	}
	if from < len(migrations) {
		if _, err := tx.Exec(ctx, `DELETE FROM arbor_schema`); err != nil {
			return 0, 0, err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO arbor_schema VALUES ($1)`, len(migrations)); err != nil {
			return 0, 0, err
		}
	}
	return from, len(migrations), tx.Commit(ctx)
}
