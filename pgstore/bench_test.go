package pgstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arborlog/arbor/catalog"
	"github.com/arborlog/arbor/internal/pgtest"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/store"
)

// Benchmarks on a throw-away cluster over a Unix socket (fsync on). Run:
//
//	go test ./pgstore -run '^$' -bench . -benchtime 2000x
//
// The listing and search benchmarks generate 100,000 sessions once (about a
// minute); set ARBOR_BENCH_SESSIONS to change the number.

func benchStore(b *testing.B) *Store {
	b.Helper()
	st, err := Open(pgtest.Shared(b).NewDB(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// MessageForTest is a user message, or an assistant one, holding text; the
// external tests use it too.
func MessageForTest(t testing.TB, role, text string) session.Message {
	t.Helper()
	var raw string
	if role == "user" {
		raw = fmt.Sprintf(`{"role":"user","content":%q,"timestamp":1700000000000}`, text)
	} else {
		raw = fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%q}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1700000000001}`, text)
	}
	m, err := session.ParseMessage([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func reportPercentiles(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkAppend appends user and assistant messages in turn to one session
// under each durability policy, and reports latency percentiles.
func BenchmarkAppend(b *testing.B) {
	for _, d := range []store.Durability{store.Always, store.Turn, store.Never} {
		b.Run(d.String(), func(b *testing.B) {
			st := benchStore(b)
			s, err := st.Create("/p", "", store.Options{Durability: d, Immediate: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			msgs := []session.Message{MessageForTest(b, "user", "please fix the flaky test in the lock package"), MessageForTest(b, "assistant", "the lock was released before the record was dropped")}
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := s.Log().AppendMessage(msgs[i%2]); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(t0))
			}
			b.StopTimer()
			reportPercentiles(b, ds)
		})
	}
}

// BenchmarkAgents: 8 agents append to 8 sessions at once (Turn); b.N appends in all.
func BenchmarkAgents(b *testing.B) {
	st := benchStore(b)
	const agents = 8
	var sessions []store.Session
	for range agents {
		s, err := st.Create("/p", "", store.Options{Immediate: true})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		sessions = append(sessions, s)
	}
	msgs := []session.Message{MessageForTest(b, "user", "run the tests"), MessageForTest(b, "assistant", "all green")}
	var mu sync.Mutex
	var ds []time.Duration
	b.ResetTimer()
	var wg sync.WaitGroup
	for a, s := range sessions {
		n := b.N / agents
		if a < b.N%agents {
			n++
		}
		wg.Go(func() {
			local := make([]time.Duration, 0, n)
			for i := range n {
				t0 := time.Now()
				if _, err := s.Log().AppendMessage(msgs[i%2]); err != nil {
					b.Error(err)
					return
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			ds = append(ds, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	reportPercentiles(b, ds)
}

var (
	bigOnce  sync.Once
	bigStore *Store
	bigErr   error
)

// words make up the generated sessions' text: each session mentions a few.
var words = []string{"lock", "flaky", "test", "refactor", "parser", "index", "search", "cursor", "branch", "compaction",
	"timeout", "retry", "socket", "deadlock", "migration", "schema", "fsync", "durability", "listing", "snippet"}

// manySessions returns a store holding n generated sessions of 4 messages
// each (n from ARBOR_BENCH_SESSIONS, default 100,000), copied in with COPY.
func manySessions(b *testing.B) (*Store, int) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("ARBOR_BENCH_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	bigOnce.Do(func() {
		bigStore, bigErr = Open(pgtest.Shared(b).NewDB(b))
		if bigErr == nil {
			bigErr = generate(bigStore, n)
		}
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigStore, n
}

// generate writes n sessions through COPY: the same rows appends write
// (fold, size, tsvector), without a transaction per entry.
func generate(st *Store, n int) error {
	ctx := context.Background()
	c, err := st.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	conn := c.Conn()
	if _, err := conn.Exec(ctx, `CREATE TEMP TABLE gen_entries (session_id text, position integer, id text, parent text, type text, timestamp text, raw bytea, text text, lex text)`); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var srows, erows [][]any
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	flush := func() error {
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"arbor_sessions"}, []string{"id", "header", "entries", "size", "fold", "listed", "cwd", "name", "parent_session", "first_message", "created_ms", "modified_ms", "messages", "entry_count"}, pgx.CopyFromRows(srows)); err != nil {
			return err
		}
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"gen_entries"}, []string{"session_id", "position", "id", "parent", "type", "timestamp", "raw", "text", "lex"}, pgx.CopyFromRows(erows)); err != nil {
			return err
		}
		srows, erows = srows[:0], erows[:0]
		return nil
	}
	for i := range n {
		id := fmt.Sprintf("gen-%07d", i)
		ts := base.Add(time.Duration(i) * time.Second)
		cwd := fmt.Sprintf("/work/project-%d", i%50)
		header := fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":%q}`, id, session.FormatTime(ts), cwd)
		var fold catalog.Summary
		fold.Add([]byte(header))
		size := int64(len(header) + 1)
		parent := ""
		for p := 1; p <= 4; p++ {
			eid := fmt.Sprintf("%08x", i*4+p)
			text := words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))] + " in session " + strconv.Itoa(i)
			pj := "null"
			if parent != "" {
				pj = strconv.Quote(parent)
			}
			ets := session.FormatTime(ts.Add(time.Duration(p) * time.Millisecond))
			var raw string
			if p%2 == 1 {
				raw = fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"user","content":%q,"timestamp":%d}}`, eid, pj, ets, text, ts.UnixMilli()+int64(p))
			} else {
				raw = fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"assistant","content":[{"type":"text","text":%q}],"timestamp":%d}}`, eid, pj, ets, text, ts.UnixMilli()+int64(p))
			}
			fold.Add([]byte(raw))
			size += int64(len(raw) + 1)
			t, lex := searchable([]byte(raw))
			var par any
			if parent != "" {
				par = parent
			}
			erows = append(erows, []any{id, p, eid, par, "message", ets, []byte(raw), *t, *lex})
			parent = eid
		}
		in, listed := fold.Info(id, size, ts)
		fj, _ := fold.MarshalJSON()
		srows = append(srows, []any{id, []byte(header), 4, size, fj, listed, []byte(in.Cwd), []byte(in.Name), []byte(in.ParentSessionPath), []byte(in.FirstMessage),
			millis(in.Created), millis(in.Modified), in.MessageCount, in.EntryCount})
		if len(srows) == 5000 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, `INSERT INTO arbor_entries SELECT session_id, position, id, parent, type, timestamp, raw, text, lex::tsvector FROM gen_entries;
		DROP TABLE gen_entries; ANALYZE arbor_sessions; ANALYZE arbor_entries`)
	return err
}

// BenchmarkList lists every one of 100,000 sessions, and one project's.
func BenchmarkList(b *testing.B) {
	st, n := manySessions(b)
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			infos, err := st.List(catalog.Scope{All: true}, catalog.ListOptions{})
			if err != nil || len(infos) != n {
				b.Fatalf("%d listed, %v", len(infos), err)
			}
		}
	})
	b.Run("project", func(b *testing.B) {
		for b.Loop() {
			infos, err := st.List(catalog.Scope{Cwd: "/work/project-7"}, catalog.ListOptions{})
			if err != nil || len(infos) != n/50 {
				b.Fatalf("%d listed, %v", len(infos), err)
			}
		}
	})
}

// BenchmarkSearch searches 100,000 sessions: a word (first 50 hits, as
// arbor search shows), a phrase, and a regular expression.
func BenchmarkSearch(b *testing.B) {
	st, _ := manySessions(b)
	for _, q := range []string{"deadlock", `"flaky test"`, "migrat*", `"session 4242"`, "re:session 7[0-9]*1\\b"} {
		query, err := catalog.ParseQuery(q)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(q, func(b *testing.B) {
			for b.Loop() {
				hits, err := st.Search(catalog.Scope{All: true}, query, catalog.SearchOptions{Limit: 50})
				if err != nil || len(hits) == 0 {
					b.Fatalf("%d hits, %v", len(hits), err)
				}
			}
		})
	}
}
