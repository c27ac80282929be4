package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arborlog/arbor/importers"
	"github.com/arborlog/arbor/internal/toolargs"
	"github.com/arborlog/arbor/session"
	"github.com/arborlog/arbor/session/jsonl"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// browser is a headless Chromium (Debian's chromium, installed by .ci/run)
// driven through the DevTools protocol.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu      sync.Mutex
	console []string
}

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("ARBOR_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium; .ci/run does it): cannot open exported pages")
	return ""
}

// newBrowser starts Chromium for the test; it stops when the test ends.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1300, 900), chromedp.Flag("disable-gpu", true), chromedp.UserDataDir(t.TempDir()))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelT(); cancel(); cancelA() })
	b := &browser{t: t, ctx: ctx}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, string(m.Type)+": "+m.String())
			b.mu.Unlock()
		}
	}()
	return b
}

// open loads an exported page and waits until its script has drawn it.
func (b *browser) open(file, suffix string) {
	b.t.Helper()
	abs, _ := filepath.Abs(file)
	if err := chromedp.Do(b.ctx, chromedp.Navigate("file://"+abs+suffix), chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
		b.t.Fatalf("open %s%s: %v (console: %v)", file, suffix, err, b.messages())
	}
}

// waitFor waits until the expression is true in the page.
func (b *browser) waitFor(js string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		b.t.Fatalf("waiting for %s: %v", js, err)
	}
}

func (b *browser) messages() []string {
	time.Sleep(100 * time.Millisecond) // let the last events arrive
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.console...)
}

func eval[T any](b *browser, js string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", strings.TrimSpace(js), err)
	}
	return v
}

// exportPage writes the HTML export of l to a temporary file.
func exportPage(t *testing.T, l *session.Log, o Options, policy string) string {
	t.Helper()
	var b bytes.Buffer
	if err := writeHTML(&b, l, o, policy); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func (b *browser) noConsole() {
	b.t.Helper()
	if m := b.messages(); len(m) > 0 {
		b.t.Errorf("the page wrote to the console:\n%s", strings.Join(m, "\n"))
	}
}

// treeIDs scrolls the (virtualized) tree from top to bottom and returns the
// ids of every row it showed, in order.
func (b *browser) treeIDs() []string {
	b.t.Helper()
	ids, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`(async () => {
		const t = document.getElementById('tree'), seen = new Set(), out = [];
		for (let y = 0; ; y += Math.max(50, t.clientHeight / 2)) {
			t.scrollTop = y;
			t.dispatchEvent(new Event('scroll')); // the page draws the rows in view now, however busy the machine
			await new Promise(r => setTimeout(r, 5));
			for (const r of document.querySelectorAll('#tree .row')) if (!seen.has(r.dataset.idx)) { seen.add(r.dataset.idx); out.push([+r.dataset.idx, r.dataset.id]); }
			if (y > t.scrollHeight) break;
		}
		t.scrollTop = 0;
		return out.sort((a, b) => a[0] - b[0]).map(x => x[1]);
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatal(err)
	}
	return ids
}

// convIDs are the ids of the entries the conversation shows, in order.
func (b *browser) convIDs() []string {
	return eval[[]string](b, `Array.from(document.querySelectorAll('#conv article')).map(a => a.id.slice(6))`)
}

func (b *browser) click(sel string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		b.t.Fatalf("click %s: %v", sel, err)
	}
	time.Sleep(50 * time.Millisecond)
}

func ids(es []*session.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// newestLeaf is the leaf under id with the latest timestamp: the path the page
// shows when that entry is clicked (as pi's page does).
func newestLeaf(l *session.Log, id string) string {
	best, bestTS := id, ""
	stack := []string{id}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		kids := l.Children(x)
		if len(kids) == 0 {
			if ts := l.Entry(x).Timestamp; ts >= bestTS {
				best, bestTS = x, ts
			}
		}
		for _, k := range kids {
			stack = append(stack, k.ID)
		}
	}
	return best
}

// Pages of sessions pi and arbor wrote open without a console message, and
// the tree with filter "all" lists every entry of the session.
func TestPageTreeShowsEveryEntry(t *testing.T) {
	b := newBrowser(t)
	for _, name := range append(fixtures, "xss") {
		l := fixtureOrCorpus(t, name)
		b.open(exportPage(t, l, Options{Source: name + ".jsonl"}, csp()), "")
		b.click(`#filters button[data-filter="all"]`)
		if diff := cmp.Diff(preorder(l), b.treeIDs()); diff != "" {
			t.Errorf("%s: tree rows with filter all differ from the session's entries (-want +got):\n%s", name, diff)
		}
		if got, want := eval[string](b, `document.getElementById('tree-status').textContent`), fmt.Sprintf("%d of %d entries shown", l.Len(), l.Len()); got != want {
			t.Errorf("%s: status %q, want %q", name, got, want)
		}
		if name == "refactor" && eval[int](b, `document.querySelectorAll('#conv .md p code, #conv .md li code').length`) == 0 {
			t.Error("no inline code rendered in the conversation")
		}
		// The page opens on the active leaf's path.
		if diff := cmp.Diff(ids(l.PathTo(l.Leaf().ID)), b.convIDs()); diff != "" {
			t.Errorf("%s: conversation is not the active path (-want +got):\n%s", name, diff)
		}
		b.noConsole()
	}
}

func fixtureOrCorpus(t *testing.T, name string) *session.Log {
	if name == "xss" {
		return session.Load(xssCorpus(t))
	}
	return load(t, name)
}

// preorder lists the ids of the tree depth first, children by timestamp.
func preorder(l *session.Log) []string {
	var out []string
	var stack []*session.TreeNode
	roots := l.Tree()
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, roots[i])
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, n.Entry.ID)
		for i := len(n.Children) - 1; i >= 0; i-- {
			stack = append(stack, n.Children[i])
		}
	}
	return out
}

// Clicking a tree row on another branch shows the path through it, marks it,
// and puts a link to it in the address bar.
func TestPageClickShowsPath(t *testing.T) {
	b := newBrowser(t)
	for _, name := range fixtures {
		l := load(t, name)
		b.open(exportPage(t, l, Options{}, csp()), "")
		b.click(`#filters button[data-filter="all"]`)
		active := map[string]bool{}
		for _, e := range l.PathTo(l.Leaf().ID) {
			active[e.ID] = true
		}
		clicked := 0
		for _, e := range l.Entries() {
			if active[e.ID] || clicked >= 3 {
				continue
			}
			clicked++
			b.click(fmt.Sprintf(`#tree .row[data-id=%q]`, e.ID))
			leaf := newestLeaf(l, e.ID)
			if diff := cmp.Diff(ids(l.PathTo(leaf)), b.convIDs()); diff != "" {
				t.Errorf("%s: after clicking %s the conversation is not the path to %s (-want +got):\n%s", name, e.ID, leaf, diff)
			}
			if got := eval[string](b, `document.querySelector('#conv article.target')?.id || ''`); got != "entry-"+e.ID {
				t.Errorf("%s: after clicking %s the marked entry is %q", name, e.ID, got)
			}
			if got, want := eval[string](b, `location.hash`), "#leaf="+leaf+"&entry="+e.ID; got != want && leaf != e.ID {
				t.Errorf("%s: address %q, want %q", name, got, want)
			}
		}
		if clicked == 0 {
			t.Fatalf("%s has no entry off the active path to click", name)
		}
		b.noConsole()
	}
}

// The filters show what arbor tree's filters show, and search narrows the rows
// to entries holding every word.
func TestPageFiltersAndSearch(t *testing.T) {
	b := newBrowser(t)
	words := map[string][]string{"refactor": {"units", "unit()"}, "pi16-n000": {"goroutine", "pointer"}}
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) { filtersAndSearch(t, b, load(t, name), words[name]) })
	}
}

func filtersAndSearch(t *testing.T, b *browser, l *session.Log, words []string) {
	b.t = t
	b.open(exportPage(t, l, Options{}, csp()), "")
	count := func(keep func(n *session.TreeNode) bool) []string {
		var out []string
		var walk func(ns []*session.TreeNode)
		walk = func(ns []*session.TreeNode) {
			for _, n := range ns {
				if keep(n) {
					out = append(out, n.Entry.ID)
				}
				walk(n.Children)
			}
		}
		walk(l.Tree())
		return out
	}
	leaf := l.Leaf().ID
	def := func(n *session.TreeNode, noTools bool) bool {
		e := n.Entry
		switch e.Type {
		case session.TypeLabel, session.TypeCustom, session.TypeModelChange, session.TypeThinkingLevelChange, session.TypeSessionInfo,
			session.TypeContextEdit, session.TypeUsage:
			return false
		}
		if noTools && e.Role() == session.RoleToolResult {
			return false
		}
		if e.Role() == session.RoleAssistant && e.ID != leaf {
			m, _ := e.Message()
			d, _ := m.Data()
			if strings.TrimSpace(d.Content.Text("")) == "" && !failed(d.StopReason) {
				return false
			}
		}
		return true
	}
	cases := []struct {
		filter string
		want   []string
	}{
		{"default", count(func(n *session.TreeNode) bool { return def(n, false) })},
		{"no-tools", count(func(n *session.TreeNode) bool { return def(n, true) })},
		{"user", count(func(n *session.TreeNode) bool { return n.Entry.Role() == session.RoleUser })},
		{"labeled", count(func(n *session.TreeNode) bool { return n.Label != "" })},
		{"all", count(func(*session.TreeNode) bool { return true })},
	}
	seen := map[int]bool{}
	for _, c := range cases {
		b.click(fmt.Sprintf(`#filters button[data-filter=%q]`, c.filter))
		got := b.treeIDs()
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("filter %s (-want +got):\n%s", c.filter, diff)
		}
		seen[len(got)] = true
	}
	if len(seen) < 4 {
		t.Errorf("the filters show only %d different row counts", len(seen))
	}
	// Search: every row shown holds the words; fewer rows than without.
	b.click(`#filters button[data-filter="all"]`)
	if err := chromedp.Do(b.ctx, chromedp.SendKeys(chromedp.CSS(`#search`), strings.ToUpper(strings.Join(words, " ")))); err != nil {
		t.Fatal(err)
	}
	b.waitFor(fmt.Sprintf(`document.getElementById('tree-status').textContent.endsWith(%q)`, "matching “"+strings.Join(words, " ")+"”"))
	got := b.treeIDs()
	if len(got) == 0 || len(got) >= l.Len() {
		t.Fatalf("search shows %d of %d rows", len(got), l.Len())
	}
	for _, id := range got {
		raw := strings.ToLower(string(l.Entry(id).Raw()))
		for _, w := range words {
			if !strings.Contains(raw, w) {
				t.Errorf("search shows %s, which does not hold %q", id, w)
			}
		}
	}
	if err := chromedp.Do(b.ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(b.treeIDs()); n != l.Len() {
		t.Errorf("after Escape the tree shows %d rows, want %d", n, l.Len())
	}
	b.noConsole()
}

// A deep link (#leaf=&entry=, or pi's ?leafId=&targetId=) opens that path and
// scrolls to the entry.
func TestPageDeepLink(t *testing.T) {
	b := newBrowser(t)
	l := load(t, "pi16-n000")
	page := exportPage(t, l, Options{}, csp())
	for _, leaf := range leaves(l)[1:] {
		path := l.PathTo(leaf)
		target := path[len(path)/3].ID
		for _, suffix := range []string{"#leaf=" + leaf + "&entry=" + target, "?leafId=" + leaf + "&targetId=" + target} {
			b.open(page, suffix)
			if diff := cmp.Diff(ids(path), b.convIDs()); diff != "" {
				t.Errorf("%s: conversation is not the path to %s (-want +got):\n%s", suffix, leaf, diff)
			}
			inView := eval[bool](b, fmt.Sprintf(`(() => { const e = document.getElementById(%q); if (!e || !e.classList.contains('target')) return false; const r = e.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; })()`, "entry-"+target))
			if !inView {
				t.Errorf("%s: entry %s is not marked and in view", suffix, target)
			}
		}
	}
	b.noConsole()
}

// The XSS corpus never runs, with the page's Content-Security-Policy and
// without it (so the rendering alone is shown safe), whatever the reader
// opens: every branch, every collapsed block, every filter, a search.
func TestPageXSSCorpus(t *testing.T) {
	l := session.Load(xssCorpus(t))
	for _, v := range []struct{ name, policy string }{{"csp", csp()}, {"no-csp", ""}} {
		t.Run(v.name, func(t *testing.T) {
			b := newBrowser(t)
			b.open(exportPage(t, l, Options{}, v.policy), "")
			b.click(`#t-tools`)
			for _, leaf := range leaves(l)[1:] {
				b.open(exportPage(t, l, Options{}, v.policy), "#leaf="+leaf)
				eval[int](b, `(() => { document.querySelectorAll('details').forEach(d => d.open = true); return 0; })()`)
				b.waitFor(`[...document.querySelectorAll('details')].every(d => d.children.length > 1)`) // filled on toggle
				for _, f := range []string{"all", "user", "default"} {
					b.click(fmt.Sprintf(`#filters button[data-filter=%q]`, f))
				}
				checkInert(t, b)
			}
			if err := chromedp.Do(b.ctx, chromedp.SendKeys(chromedp.CSS(`#search`), "<script>")); err != nil {
				t.Fatal(err)
			}
			b.waitFor(`document.getElementById('tree-status').textContent.endsWith('matching “<script>”')`)
			checkInert(t, b)
			text := eval[string](b, `document.getElementById('conv').textContent`)
			for _, want := range []string{"$&", "${window.__arborPwned=1}", "</script><script>", "<img src=x onerror=", "line\u2028separator", "{{.CSP}}"} {
				if !strings.Contains(text, want) {
					t.Errorf("the conversation does not show %q as text", want)
				}
			}
			if n := eval[int](b, `document.querySelectorAll('#conv img[src^="data:image/png;base64,iVBOR"]').length`); n == 0 {
				t.Error("the valid image of the corpus is not shown")
			}
			if v.policy != "" {
				b.noConsole()
			}
		})
	}
}

func checkInert(t *testing.T, b *browser) {
	t.Helper()
	report := eval[[]string](b, `(() => {
		const bad = [];
		if (window.__arborPwned !== undefined) bad.push('canary set');
		if (document.title === 'PWNED') bad.push('title changed');
		const app = document.getElementById('app');
		for (const el of app.querySelectorAll('script,iframe,object,embed,svg,math,style,link,base,form,meta,frame,input:not(#search),textarea')) bad.push('element ' + el.tagName);
		for (const el of document.querySelectorAll('*')) for (const a of el.attributes) {
			if (/^on/i.test(a.name)) bad.push('attribute ' + a.name + ' on ' + el.tagName);
			if (a.name === 'style' && !el.closest('#tree')) bad.push('style attribute on ' + el.tagName);
		}
		for (const a of app.querySelectorAll('a[href]')) if (!/^(https?:|mailto:)$/.test(a.protocol)) bad.push('link ' + a.getAttribute('href'));
		for (const i of app.querySelectorAll('img')) if (!/^data:image\//.test(i.getAttribute('src') || '')) bad.push('image ' + i.getAttribute('src'));
		return bad;
	})()`)
	for _, r := range report {
		t.Error(r)
	}
}

// The page of the 100 MB session opens, and the reader can scroll the tree,
// pick another branch and search without the page stalling. Skipped unless
// ARBOR_BIG_SESSION names the session (node pi.mjs big FILE 100).
func TestPageBigSession(t *testing.T) {
	path := bigSession(t)
	l, err := jsonl.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	page := exportPage(t, l, Options{Source: path}, csp())
	b := newBrowser(t)
	start := time.Now()
	b.open(page, "")
	t.Logf("page of %d entries ready in %v; in the page (ms): %v", l.Len(), time.Since(start), eval[map[string]float64](b, `(() => {
		const n = performance.getEntriesByType('navigation')[0], m = name => performance.getEntriesByName(name)[0].startTime;
		return {responseEnd: n.responseEnd, scriptStart: m('arbor-start'), dataParsed: m('arbor-parsed'), ready: m('arbor-ready')};
	})()`))
	timed := func(what, js string) {
		t.Helper()
		start := time.Now()
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		d := time.Since(start)
		t.Logf("%s: %v", what, d)
		if d > 5*time.Second {
			t.Errorf("%s took %v", what, d)
		}
	}
	timed("scroll the tree to the end and back", `(async () => { const t = document.getElementById('tree'); for (let y = 0; y < t.scrollHeight; y += t.scrollHeight / 20) { t.scrollTop = y; await new Promise(r => requestAnimationFrame(r)); } t.scrollTop = 0; return 0; })()`)
	timed("filter all", `(() => { document.querySelector('#filters button[data-filter="all"]').click(); return document.querySelectorAll('#tree .row').length; })()`)
	timed("select the first entry's newest leaf", `(() => { document.querySelector('#tree .row').click(); return document.querySelectorAll('#conv article').length; })()`)
	timed("show earlier entries", `(() => { const b = document.querySelector('#conv button.more'); if (b) b.click(); return 0; })()`)
	timed("search (after the page's 120 ms pause for typing)", `(async () => { const s = document.getElementById('search'); s.value = 'deadline refactor'; s.dispatchEvent(new Event('input'));
		while (!document.getElementById('tree-status').textContent.endsWith('matching “deadline refactor”')) await new Promise(r => setTimeout(r, 10));
		return 0; })()`)
	b.noConsole()
}

// The page's JSONL download holds every entry of the session.
func TestPageDownloadJSONL(t *testing.T) {
	b := newBrowser(t)
	l := load(t, "refactor")
	b.open(exportPage(t, l, Options{Source: "/s/refactor.jsonl"}, csp()), "")
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`(async () => {
		let blob, name;
		const create = URL.createObjectURL, click = HTMLAnchorElement.prototype.click;
		URL.createObjectURL = x => { blob = x; return create(x); };
		HTMLAnchorElement.prototype.click = function () { name = this.download; };
		document.getElementById('t-jsonl').click();
		URL.createObjectURL = create; HTMLAnchorElement.prototype.click = click;
		return [name, await blob.text()];
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "refactor.jsonl" {
		t.Errorf("download named %q", got[0])
	}
	dl := session.Load([]byte(got[1]))
	if !dl.Report().Clean() || dl.Header().ID != l.Header().ID {
		t.Errorf("download does not load as the session: %+v, header %+v", dl.Report(), dl.Header())
	}
	if diff := cmp.Diff(preorder(l), ids(dl.Entries())); diff != "" {
		t.Errorf("download entries differ (-session +download):\n%s", diff)
	}
	if want, _ := json.Marshal(l.Context()); !bytes.Equal(want, mustJSON(t, dl.Context())) {
		t.Error("the download's context differs from the session's")
	}
	b.noConsole()
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A chain 30,000 entries deep with branches near its end opens: the tree
// shows every entry and the path is rendered in part, with the rest on demand.
func TestPageDeepTree(t *testing.T) {
	const depth = 30000
	var sb strings.Builder
	sb.WriteString(`{"type":"session","version":3,"id":"deep","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	parent := "null"
	for i := 0; i < depth; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		content := fmt.Sprintf(`[{"type":"text","text":"step %d"}]`, i)
		fmt.Fprintf(&sb, `{"type":"message","id":"e%d","parentId":%s,"timestamp":"2026-12-01T00:00:00.000Z","message":{"role":%q,"content":%s,"timestamp":%d}}`+"\n", i, parent, role, content, i)
		parent = fmt.Sprintf(`"e%d"`, i)
	}
	fmt.Fprintf(&sb, `{"type":"message","id":"side","parentId":"e%d","timestamp":"2026-12-01T00:00:01.000Z","message":{"role":"user","content":"a side branch","timestamp":1}}`+"\n", depth-10)
	fmt.Fprintf(&sb, `{"type":"message","id":"last","parentId":"e%d","timestamp":"2026-12-01T00:00:02.000Z","message":{"role":"user","content":"the end","timestamp":2}}`+"\n", depth-1)
	l := session.Load([]byte(sb.String()))
	b := newBrowser(t)
	b.open(exportPage(t, l, Options{}, csp()), "")
	b.click(`#filters button[data-filter="all"]`)
	if got, want := eval[string](b, `document.getElementById('tree-status').textContent`), fmt.Sprintf("%d of %d entries shown", depth+2, depth+2); got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	// As pi's page, it opens at the top: the path's first entries.
	if got := b.convIDs(); len(got) == 0 || got[0] != "e0" || len(got) > 200 {
		t.Errorf("conversation shows %d entries starting %v; want the path's first entries", len(got), got[:min(1, len(got))])
	}
	b.click(`#conv button.more`)
	if n := len(b.convIDs()); n <= 40 {
		t.Errorf("after 'Show later entries' %d entries", n)
	}
	b.open(exportPage(t, l, Options{}, csp()), "#leaf=e5&entry=e2")
	if got := b.convIDs(); len(got) != 6 || got[0] != "e0" {
		t.Errorf("deep link to e5 shows %v", got)
	}
	b.noConsole()
}

// The arrow keys walk the tree: each step shows the next row's entry.
func TestPageTreeKeys(t *testing.T) {
	b := newBrowser(t)
	l := load(t, "refactor")
	b.open(exportPage(t, l, Options{}, csp()), "")
	b.click(`#filters button[data-filter="all"]`)
	b.click(`#tree .row`)
	rows := preorder(l)
	for i := 1; i < 4; i++ {
		if err := chromedp.Do(b.ctx, chromedp.KeyEvent(kb.ArrowDown)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		if got := eval[string](b, `document.querySelector('#conv article.target')?.id || ''`); got != "entry-"+rows[i] {
			t.Errorf("after %d steps down the marked entry is %q, want entry-%s", i, got, rows[i])
		}
	}
	b.noConsole()
}

// Pathological Markdown (deep nesting, runs of delimiters, unclosed fences,
// long lines) renders without an exception and without stalling the page.
func TestPageMarkdownStress(t *testing.T) {
	texts := []string{
		strings.Repeat(">", 5000) + " deep quote",
		strings.Repeat("- ", 3000) + "deep list",
		strings.Repeat("*a", 20000) + strings.Repeat("_b", 20000),
		strings.Repeat("[", 20000) + strings.Repeat("](", 20000),
		strings.Repeat("`", 5000) + "x" + strings.Repeat("``", 3000),
		"```go\n" + strings.Repeat("func f() { return \"x\" } // c\n", 20000),
		strings.Repeat("| a | b |\n|---|---|\n", 2000),
		strings.Repeat("x", 1<<20),
		strings.Repeat("![a](data:image/png;base64,", 5000),
		strings.Repeat("<http://", 10000),
		strings.Repeat("~~", 20000) + strings.Repeat("**", 20000),
		"```js\n" + strings.Repeat("/*`\"", 40000),
		"```py\n" + strings.Repeat("'a", 80000),
	}
	var sb strings.Builder
	sb.WriteString(`{"type":"session","version":3,"id":"stress","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	parent := "null"
	for i, text := range texts {
		raw, _ := json.Marshal(map[string]any{"type": "message", "id": fmt.Sprintf("m%d", i), "parentId": json.RawMessage(parent), "timestamp": "2026-12-01T00:00:01.000Z",
			"message": map[string]any{"role": "user", "content": text, "timestamp": i}})
		sb.Write(raw)
		sb.WriteByte('\n')
		parent = fmt.Sprintf(`"m%d"`, i)
	}
	l := session.Load([]byte(sb.String()))
	b := newBrowser(t)
	start := time.Now()
	b.open(exportPage(t, l, Options{}, csp()), "")
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the page took %v to render", d)
	}
	if got := b.convIDs(); len(got) != len(texts) {
		t.Errorf("conversation shows %d of %d entries", len(got), len(texts))
	}
	b.noConsole()
}

// Every session of the repository's pi corpus (testdata/pi/sessions: pi-written
// sessions and damaged ones with loops, duplicate ids, garbage lines, empty
// files) and of the compaction corpus opens: no console message, every entry
// in the tree, the active path in the conversation.
func TestPagePiCorpus(t *testing.T) {
	files, _ := filepath.Glob("../testdata/pi/sessions/*.jsonl")
	more, _ := filepath.Glob("../compaction/testdata/pi/sessions/*.jsonl")
	files = append(files, more...)
	if len(files) < 40 {
		t.Fatalf("only %d corpus sessions found", len(files))
	}
	b := newBrowser(t)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		l := session.Load(data)
		b.open(exportPage(t, l, Options{Source: f}, csp()), "")
		b.click(`#filters button[data-filter="all"]`)
		if diff := cmp.Diff(preorder(l), b.treeIDs(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: tree differs from the session (-want +got):\n%s", f, diff)
		}
		var want []string
		if leaf := l.Leaf(); leaf != nil {
			want = ids(l.PathTo(leaf.ID))
		}
		// The page draws the first 40 entries of a long path, more on scrolling.
		got := b.convIDs()
		if len(got) < min(len(want), 40) || len(got) > len(want) || !cmp.Equal(want[:len(got)], got, cmpopts.EquateEmpty()) {
			t.Errorf("%s: conversation %v, want the start of the active path %v", f, got, want)
		}
		if m := b.messages(); len(m) > 0 {
			t.Errorf("%s: console: %s", f, strings.Join(m, "\n"))
			b.mu.Lock()
			b.console = nil
			b.mu.Unlock()
		}
	}
}

// A huge tool output opens at once: its start is shown, the rest on request.
func TestPageHugeOutput(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 100000) // 1.7 MB
	raw, _ := json.Marshal(map[string]any{"type": "message", "id": "r", "parentId": "a", "timestamp": "2026-12-01T00:00:02.000Z",
		"message": map[string]any{"role": "toolResult", "toolCallId": "c", "toolName": "bash", "content": []any{map[string]any{"type": "text", "text": big}}, "timestamp": 2}})
	data := `{"type":"session","version":3,"id":"huge","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-12-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":{"command":"cat big"}}],"stopReason":"toolUse","timestamp":1}}
` + string(raw) + "\n"
	l := session.Load([]byte(data))
	b := newBrowser(t)
	b.open(exportPage(t, l, Options{}, csp()), "")
	b.click(`#entry-r summary`)
	if n := eval[int](b, `document.querySelector('#entry-r pre').textContent.length`); n != 100000 {
		t.Errorf("the opened output shows %d characters, want the first 100,000", n)
	}
	b.click(`#entry-r button.rest`)
	if n := eval[int](b, `document.querySelector('#entry-r pre').textContent.length`); n != len(big) {
		t.Errorf("after 'Show the other' the output shows %d of %d characters", n, len(big))
	}
	b.noConsole()
}

// The page opens at the top, as pi's does: the header (name, folder, cost)
// and the first user message in view, the rest of the path reached by
// scrolling alone, down to the leaf.
func TestPageOpensAtTheTop(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"type":"session","version":3,"id":"long","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	sb.WriteString(`{"type":"session_info","id":"n","parentId":null,"timestamp":"2026-12-01T00:00:00.000Z","name":"the long one"}` + "\n")
	parent := `"n"`
	const n = 300
	for i := 0; i < n; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&sb, `{"type":"message","id":"e%d","parentId":%s,"timestamp":"2026-12-01T00:00:00.000Z","message":{"role":%q,"content":[{"type":"text","text":"step %d\\n\\nmore text to give the entry some height"}],"timestamp":%d}}`+"\n", i, parent, role, i, i)
		parent = fmt.Sprintf(`"e%d"`, i)
	}
	l := session.Load([]byte(sb.String()))
	b := newBrowser(t)
	b.open(exportPage(t, l, Options{}, csp()), "")
	inView := func(id string) bool {
		return eval[bool](b, fmt.Sprintf(`(() => { const e = document.getElementById(%q); if (!e) return false; const r = e.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; })()`, id))
	}
	if !inView("head") || !inView("entry-e0") {
		t.Errorf("opened without the header or the first user message in view: header %v, e0 %v", inView("head"), inView("entry-e0"))
	}
	if h := eval[string](b, `document.querySelector('#head h1').textContent`); h != "the long one" {
		t.Errorf("header names %q", h)
	}
	// Scroll down as a reader would, without a click, until the leaf shows.
	for i := 0; i < 200 && !inView("entry-e299"); i++ {
		eval[int](b, `(() => { const m = document.getElementById('main'); m.scrollTop += m.clientHeight; return 0; })()`)
		time.Sleep(20 * time.Millisecond)
	}
	if !inView("entry-e299") {
		t.Errorf("the leaf is not reached by scrolling: %d entries painted", len(b.convIDs()))
	}
	b.noConsole()
}

// A branch summary pi wrote before 1.6.0 names the branch point as fromId,
// which says nothing of how many entries it summarizes: the page does not
// say "Summarizes 0 entries".
func TestPageBranchSummaryOfOldPi(t *testing.T) {
	b := newBrowser(t)
	l := load(t, "refactor")
	b.open(exportPage(t, l, Options{}, csp()), "#leaf=2f5c8d93&entry=2f5c8d93")
	got := eval[string](b, `document.getElementById('entry-2f5c8d93').textContent`)
	if strings.Contains(got, "Summarizes 0 entries") || !strings.Contains(got, "Summarizes a branch left at 72a0b8e4") {
		t.Errorf("the branch summary reads %q", got)
	}
	b.noConsole()
}

// A page with a 2 MB word nothing can break (Thai, which Chromium breaks by
// dictionary, and Latin letters) as the session's name, a user message and a
// tool's output opens in seconds, and the word wraps: nothing is wider than
// the window, and none of its text is lost.
func TestPageLongWord(t *testing.T) {
	words := map[string]string{
		"thai":  strings.Repeat("กขคงจฉชซ", 2<<20/24),
		"latin": strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 2<<20/62),
	}
	b := newBrowser(t)
	for _, kind := range []string{"latin", "thai"} {
		word := words[kind]
		line := func(v map[string]any) string { return string(mustJSON(t, v)) + "\n" }
		data := `{"type":"session","version":3,"id":"word","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"}` + "\n" +
			line(map[string]any{"type": "message", "id": "u", "parentId": nil, "timestamp": "2026-12-01T00:00:01.000Z",
				"message": map[string]any{"role": "user", "content": word, "timestamp": 1}}) +
			line(map[string]any{"type": "message", "id": "a", "parentId": "u", "timestamp": "2026-12-01T00:00:02.000Z",
				"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "toolCall", "id": "c", "name": "bash", "arguments": map[string]any{"command": "cat word"}}}, "stopReason": "toolUse", "timestamp": 2}}) +
			line(map[string]any{"type": "message", "id": "r", "parentId": "a", "timestamp": "2026-12-01T00:00:03.000Z",
				"message": map[string]any{"role": "toolResult", "toolCallId": "c", "toolName": "bash", "content": []any{map[string]any{"type": "text", "text": word}}, "timestamp": 3}}) +
			line(map[string]any{"type": "session_info", "id": "n", "parentId": "r", "timestamp": "2026-12-01T00:00:04.000Z", "name": word})
		page := exportPage(t, session.Load([]byte(data)), Options{}, csp())
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		start := time.Now()
		err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`)))
		if err == nil { // the layout, which the script may not have waited for
			_, err = chromedp.Run(ctx, chromedp.Evaluate[float64](`document.getElementById('main').scrollWidth`))
		}
		cancel()
		if err != nil {
			t.Fatalf("%s: the page did not open in 30 s (%v)", kind, err)
		}
		t.Logf("%s: opened in %v", kind, time.Since(start))
		b.click(`#entry-r summary`)
		b.click(`#entry-r button.rest`)
		if got := eval[[]float64](b, `[document.getElementById('main').scrollWidth, document.getElementById('main').clientWidth]`); got[0] > got[1] {
			t.Errorf("%s: the page is %v px wide in a window of %v: the word does not wrap", kind, got[0], got[1])
		}
		for _, sel := range []string{`#head h1`, `#entry-u .md`, `#entry-r pre`} {
			if got := eval[string](b, `document.querySelector('`+sel+`').textContent`); got != word {
				t.Errorf("%s: %s shows %d characters of the word's %d", kind, sel, len(got), len(word))
			}
		}
		b.noConsole()
	}
}

// Claude Code's and Codex's tools read in the page as pi's do: a Bash or
// shell call shows its command, a Read its path; a tool_reference result
// names the tool it loads; an empty thinking block is not shown.
func TestPageForeignTools(t *testing.T) {
	open := func(name string) *session.Log {
		s, err := importers.ReadFile(filepath.Join("..", "testdata", "foreign", name))
		if err != nil {
			t.Fatal(err)
		}
		return s.Log()
	}
	// The page reads each call as toolargs does in Go (it has the table, and
	// its own few lines to read arguments by it): the two agree on every call.
	agree := func(l *session.Log, heads []string) {
		t.Helper()
		for _, e := range l.Entries() {
			var m struct {
				Message struct {
					Content session.Content `json:"content"`
				} `json:"message"`
			}
			if e.Type != session.TypeMessage || e.Decode(&m) != nil {
				continue
			}
			for _, blk := range m.Message.Content.Blocks {
				shape, ok := toolargs.Lookup(blk.Name)
				if blk.Type != "toolCall" || !ok || toolargs.Pi(blk.Name) {
					continue
				}
				a := shape.Of(blk.Arguments)
				want := blk.Name + " " + a.Summary()
				if a.Command != "" {
					want = blk.Name + " $ " + a.Command
				}
				if !slices.Contains(heads, want) {
					t.Errorf("Go reads %q; the page's tools read:\n%s", want, strings.Join(heads, "\n"))
				}
			}
		}
	}
	b := newBrowser(t)
	cc := open("claude-tools.jsonl")
	b.open(exportPage(t, cc, Options{}, csp()), "")
	heads := eval[[]string](b, `[...document.querySelectorAll('#conv .tool > div:first-child')].map(d => d.textContent)`)
	agree(cc, heads)
	for _, want := range []string{"Bash $ go test ./...", "Read /work/app/main.go", "Grep func main in /work/app", "Task Survey the jobs module", "TodoWrite 2 items"} {
		if !slices.Contains(heads, want) {
			t.Errorf("no tool reads %q; the tools read:\n%s", want, strings.Join(heads, "\n"))
		}
	}
	ref := eval[string](b, `(() => { const r = [...document.querySelectorAll('#conv .tool')].find(d => d.textContent.startsWith('ToolSearch result')); if (!r) return ''; const d = r.querySelector('details'); d._fill(); return r.textContent; })()`)
	if !strings.Contains(ref, "[tool_reference: WebFetch]") {
		t.Errorf("the ToolSearch result reads %q, not the tool it references", ref)
	}
	if n := eval[int](b, `document.querySelectorAll('#conv .thinking-block').length`); n != 0 {
		t.Errorf("%d empty thinking blocks shown", n)
	}
	b.noConsole()

	b = newBrowser(t)
	cx := open(codexFixture)
	b.open(exportPage(t, cx, Options{}, csp()), "")
	heads = eval[[]string](b, `[...document.querySelectorAll('#conv .tool > div:first-child')].map(d => d.textContent)`)
	agree(cx, heads)
	for _, want := range []string{"shell $ rg -n 'func main' .", "shell $ go test ./...", "exec_command $ git status --short", "local_shell_call $ ls -la 'my dir'", "apply_patch main.go, notes.md", "update_plan 3 items"} {
		if !slices.Contains(heads, want) {
			t.Errorf("no tool reads %q; the tools read:\n%s", want, strings.Join(heads, "\n"))
		}
	}
	b.noConsole()
}

// codexFixture is a Codex rollout named as Codex names them.
const codexFixture = "rollout-2026-03-02T10-00-00-cccccccc-0000-4000-8000-000000000003.jsonl"
