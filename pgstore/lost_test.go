package pgstore_test

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/arborlog/arbor/internal/pgtest"
	"github.com/arborlog/arbor/pgstore"
	"github.com/arborlog/arbor/store"
)

// Cut modes of the proxy: the next chunk in one direction is dropped and the
// connection cut, once.
const (
	pass       = iota
	cutReplies // the server's answer is lost: the append committed, unacknowledged
	cutRequest // the request is lost: the append never reached the server
)

// proxy relays a client's Unix socket to the cluster's, and cuts a connection on demand.
type proxy struct {
	dir  string
	mode atomic.Int32
	ln   net.Listener
	wg   sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	dir, err := os.MkdirTemp("/tmp", "arborpx")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, ".s.PGSQL.5432"))
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{dir: dir, ln: ln}
	t.Cleanup(func() { ln.Close(); p.wg.Wait(); os.RemoveAll(dir) })
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("unix", target)
			if err != nil {
				c.Close()
				continue
			}
			p.wg.Go(func() { p.pump(c, s, cutRequest) })
			p.wg.Go(func() { p.pump(s, c, cutReplies) })
		}
	})
	return p
}

// pump copies from src to dst until either side ends, or cuts both when the
// proxy is set to cut this direction.
func (p *proxy) pump(src, dst net.Conn, cut int32) {
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if p.mode.CompareAndSwap(cut, pass) {
				return
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return // io.EOF or a cut: either way the relay ends
		}
	}
}

// TestConnectionLostMidAppend loses the connection in the middle of an
// append, both ways: the answer lost after the server committed (the entry
// is found and acknowledged), and the request lost before it arrived (the
// entry is known not written, so it is sent again on a new connection). Each
// time the entry is stored exactly once and the session goes on.
func TestConnectionLostMidAppend(t *testing.T) {
	c := pgtest.Shared(t)
	u, err := url.Parse(c.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, filepath.Join(c.Dir(), ".s.PGSQL.5432"))
	q := u.Query()
	q.Set("host", p.dir)
	u.RawQuery = q.Encode()
	st, err := pgstore.Open(u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Create("/p", "", store.Options{Immediate: true, Durability: store.Always})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Log().AppendMessage(message(t, "user", "before")); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []int32{cutReplies, cutRequest} {
		p.mode.Store(mode)
		e, err := s.Log().AppendMessage(message(t, "assistant", "through a cut"))
		if err != nil {
			t.Fatalf("mode %d: %v", mode, err)
		}
		if p.mode.Load() != pass {
			t.Fatalf("mode %d: the proxy never cut the connection", mode)
		}
		ids := stored(t, strings.Replace(u.String(), "host="+url.QueryEscape(p.dir), "host="+url.QueryEscape(c.Dir()), 1), s.Ref())
		if n := strings.Count(strings.Join(ids, " "), e.ID); n != 1 || ids[len(ids)-1] != e.ID {
			t.Fatalf("mode %d: the entry is stored %d times (%v)", mode, n, ids)
		}
		next, err := s.Log().AppendMessage(message(t, "user", "after the cut"))
		if err != nil || next.ParentID != e.ID {
			t.Fatalf("mode %d: the next append: %v", mode, err)
		}
	}
}
