package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/arborlog/arbor/catalog"
)

// Limits of a tsvector: positions count to 16383, a lexeme is under 2 KiB,
// and the whole value under 1 MiB. An entry's text beyond them gets no
// tsvector: searches read its text instead.
const (
	maxPosition = 16383
	maxLexeme   = 2046
	maxVector   = 1 << 19
	maxPerWord  = 255
)

// searchable returns an entry's searchable text and its tsvector (in the
// tsvector input syntax), nil when the entry has no text or too much for a
// tsvector. The lexemes are catalog's tokens, so the database matches what
// the file catalog matches; positions make phrases match in the database.
func searchable(raw []byte) (text, lexemes *string) {
	t := catalog.EntryText(raw)
	if t == "" {
		return nil, nil
	}
	t = strings.ToValidUTF8(strings.ReplaceAll(t, "\x00", " "), "\uFFFD")
	text = &t
	toks := catalog.Tokens(t)
	if len(toks) > maxPosition {
		return text, nil
	}
	pos := map[string][]int{}
	var order []string
	for i, tok := range toks {
		if len(tok) > maxLexeme {
			return text, nil
		}
		if _, ok := pos[tok]; !ok {
			order = append(order, tok)
		}
		if len(pos[tok]) < maxPerWord {
			pos[tok] = append(pos[tok], i+1)
		}
	}
	var b strings.Builder
	for _, tok := range order {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteLexeme(tok))
		b.WriteByte(':')
		for k, p := range pos[tok] {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
		}
		if b.Len() > maxVector {
			return text, nil
		}
	}
	if b.Len() == 0 {
		return text, nil
	}
	v := b.String()
	return text, &v
}

// quoteLexeme quotes a lexeme for tsvector and tsquery input.
func quoteLexeme(s string) string {
	return "'" + strings.NewReplacer(`'`, `''`, `\`, `\\`).Replace(s) + "'"
}

// tsquery turns words and phrases into a tsquery: each term's tokens one
// after the other (<->), a trailing * a prefix, every term required.
func tsquery(q catalog.Query) string {
	parts := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		toks := make([]string, len(t.Tokens))
		for k, tok := range t.Tokens {
			toks[k] = quoteLexeme(tok)
		}
		if t.Prefix {
			toks[len(toks)-1] += ":*"
		}
		parts[i] = "(" + strings.Join(toks, " <-> ") + ")"
	}
	return strings.Join(parts, " & ")
}

// scopeSQL is the condition on arbor_sessions s for a scope, with its arguments numbered from n.
func scopeSQL(sc catalog.Scope, n int) (string, []any, error) {
	switch {
	case sc.Dir != "":
		return "", nil, fmt.Errorf("--session-dir names a folder of session files; the database store has none (use --all or run in the project)")
	case sc.All:
		return "true", nil, nil
	}
	return "s.cwd = $" + strconv.Itoa(n), []any{[]byte(sc.Cwd)}, nil
}

// List returns the sessions in scope, newest first, as the file catalog lists them.
func (s *Store) List(sc catalog.Scope, o catalog.ListOptions) ([]catalog.Info, error) {
	where, args, err := scopeSQL(sc, 1)
	if err != nil {
		return nil, err
	}
	if !o.Empty {
		where += " AND s.messages > 0"
	}
	if !o.Archived {
		where += " AND NOT s.archived"
	}
	return s.infos(where+" ORDER BY s.modified_ms DESC NULLS LAST, s.id", args)
}

// Latest returns the session in scope written last (as the file store
// returns the file modified last), archived ones aside.
func (s *Store) Latest(sc catalog.Scope) (catalog.Info, error) {
	where, args, err := scopeSQL(sc, 1)
	if err != nil {
		return catalog.Info{}, err
	}
	out, err := s.infos(where+" AND NOT s.archived ORDER BY s.updated_at DESC, s.id LIMIT 1", args)
	if err != nil {
		return catalog.Info{}, err
	}
	if len(out) == 0 {
		return catalog.Info{}, fmt.Errorf("%w in %s", catalog.ErrNotFound, sc)
	}
	return out[0], nil
}

// infos reads listing records: where is the condition on arbor_sessions s and the order.
func (s *Store) infos(where string, args []any) ([]catalog.Info, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT s.id, s.cwd, s.name, s.parent_session, s.created_ms, s.modified_ms, s.messages,
			s.first_message, s.entry_count, s.size, s.archived
		FROM arbor_sessions s WHERE s.listed AND `+where, args...)
	if err != nil {
		return nil, s.wrap(err)
	}
	var out []catalog.Info
	var in catalog.Info
	var cwd, name, parent, first []byte
	var created, modified *int64
	_, err = pgx.ForEachRow(rows, []any{&in.ID, &cwd, &name, &parent, &created, &modified, &in.MessageCount, &first, &in.EntryCount, &in.SizeBytes, &in.Archived}, func() error {
		in.Path, in.Cwd, in.Name, in.ParentSessionPath, in.FirstMessage = in.ID, string(cwd), string(name), string(parent), string(first)
		in.Created, in.Modified = timeOf(created), timeOf(modified)
		out = append(out, in)
		return nil
	})
	if err != nil {
		return nil, s.wrap(err)
	}
	return out, nil
}

// Search finds the entries in scope that match q: by relevance for words and
// phrases (the tsvector index), newest first for a regular expression (its
// literals filter in the database, the expression runs here). Every hit is
// made by catalog.MatchLine from the raw line, so its snippet is the file
// catalog's.
func (s *Store) Search(sc catalog.Scope, q catalog.Query, o catalog.SearchOptions) ([]catalog.Hit, error) {
	where, args, err := scopeSQL(sc, 1)
	if err != nil {
		return nil, err
	}
	if !o.Archived {
		where += " AND NOT s.archived"
	}
	where += " AND s.listed"
	var sql string
	if q.Regex == nil {
		args = append(args, tsquery(q))
		n := strconv.Itoa(len(args))
		sql = `SELECT e.session_id, e.raw FROM (
				SELECT session_id, raw, ts_rank(lexemes, $` + n + `::tsquery) AS rank, timestamp FROM arbor_entries WHERE lexemes @@ $` + n + `::tsquery
				UNION ALL
				SELECT session_id, raw, 0, timestamp FROM arbor_entries WHERE text IS NOT NULL AND lexemes IS NULL
			) e JOIN arbor_sessions s ON s.id = e.session_id
			WHERE ` + where + ` ORDER BY e.rank DESC, e.timestamp DESC`
	} else {
		for _, need := range q.Needs() {
			args = append(args, need)
			where += " AND strpos(lower(e.text), $" + strconv.Itoa(len(args)) + ") > 0"
		}
		sql = `SELECT e.session_id, e.raw FROM arbor_entries e JOIN arbor_sessions s ON s.id = e.session_id
			WHERE e.text IS NOT NULL AND ` + where + ` ORDER BY e.timestamp DESC`
	}
	ctx, cancel := s.ctx()
	defer cancel()
	// With a limit, ask for a few more rows than hits are wanted (a row the
	// exact match turns down is rare); if too few of them match, ask for all.
	hits, full, err := s.searchRows(ctx, sql, args, q, o.Limit, o.Limit*2+16)
	if err == nil && !full && len(hits) < o.Limit {
		hits, _, err = s.searchRows(ctx, sql, args, q, o.Limit, 0)
	}
	if err != nil {
		return nil, s.wrap(err)
	}
	if q.Regex != nil {
		slices.SortStableFunc(hits, func(a, b catalog.Hit) int { return cmp.Compare(b.Timestamp, a.Timestamp) })
	}
	if o.Limit > 0 && len(hits) > o.Limit {
		hits = hits[:o.Limit]
	}
	return hits, nil
}

// searchRows runs a search query, at most rowLimit rows (0: all), and makes
// hits of the rows that match, at most limit (0: all). full reports whether
// every row of the query was read.
func (s *Store) searchRows(ctx context.Context, sql string, args []any, q catalog.Query, limit, rowLimit int) (hits []catalog.Hit, full bool, err error) {
	if limit == 0 {
		rowLimit = 0
	}
	if rowLimit > 0 {
		sql += " LIMIT " + strconv.Itoa(rowLimit)
	}
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var id string
	var raw []byte
	n := 0
	for rows.Next() {
		n++
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, false, err
		}
		if h, ok := catalog.MatchLine(id, id, raw, q); ok {
			hits = append(hits, h)
			if limit > 0 && len(hits) == limit {
				return hits, true, nil
			}
		}
	}
	return hits, rowLimit == 0 || n < rowLimit, rows.Err()
}

// Resolve turns what the user typed into a session id: an id, a unique id
// prefix, or a session name (in scope), as the file catalog resolves them.
func (s *Store) Resolve(arg string, sc catalog.Scope) (string, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" || !utf8.ValidString(arg) {
		return "", fmt.Errorf("%w: give a session id, an id prefix or a name", catalog.ErrNotFound)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var ids []string
	rows, err := s.pool.Query(ctx, `SELECT id FROM arbor_sessions WHERE id = $1 OR starts_with(id, $1) ORDER BY id = $1 DESC, id LIMIT 9`, arg)
	if err != nil {
		return "", s.wrap(err)
	}
	ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", s.wrap(err)
	}
	if len(ids) > 0 && ids[0] == arg {
		return arg, nil
	}
	if len(ids) == 1 {
		return ids[0], nil
	}
	all, err := s.List(sc, catalog.ListOptions{Empty: true, Archived: true})
	if err != nil {
		return "", err
	}
	var named []catalog.Info
	for _, in := range all {
		if in.Name != "" && catalog.SameName(in.Name, arg) {
			named = append(named, in)
		}
	}
	switch {
	case len(named) == 1:
		return named[0].ID, nil
	case len(named) > 1:
		return "", &catalog.AmbiguousError{Query: arg, Candidates: named}
	case len(ids) > 1:
		var cands []catalog.Info
		for _, id := range ids {
			cands = append(cands, catalog.Info{ID: id, Path: id})
		}
		return "", &catalog.AmbiguousError{Query: arg, Candidates: cands}
	}
	return "", fmt.Errorf("%w: %q is no session id, id prefix or name in %s", catalog.ErrNotFound, arg, s.name)
}

// Follow calls f with every entry line of session id after position after,
// as they are committed, until ctx ends or f fails: it listens for the
// writer's notifications and reads what is new at each.
func (s *Store) Follow(ctx context.Context, id string, after int, f func(pos int, raw []byte) error) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.wrap(err)
	}
	c := pc.Hijack() // LISTEN belongs to the connection: never hand it back
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, `LISTEN arbor_entries`); err != nil {
		return s.wrap(err)
	}
	for {
		rows, err := c.Query(ctx, `SELECT position, raw FROM arbor_entries WHERE session_id = $1 AND position > $2 ORDER BY position`, id, after)
		if err != nil {
			return s.wrap(err)
		}
		var pos int
		var raw []byte
		_, err = pgx.ForEachRow(rows, []any{&pos, &raw}, func() error {
			after = pos
			return f(pos, raw)
		})
		if err != nil {
			return err
		}
		for {
			n, err := c.WaitForNotification(ctx)
			if err != nil {
				if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
					return ctx.Err()
				}
				return s.wrap(err)
			}
			if n.Payload == id {
				break
			}
		}
	}
}
