package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// piDeviations lists, per corpus session and check ("*" for every check),
// where arbor differs from pi on purpose. Each names its SPEC §8 row and
// checks what arbor does instead, against facts read from the file itself.
var piDeviations = map[string]map[string]piDeviation{
	// pi rewrites this with a fresh header. arbor's reading commands refuse
	// it with one line that names the file, and leave it alone; writers
	// refuse it too. (An empty or blank file is an empty session, as pi
	// reads it.)
	"dmg-nothing-parses": {"*": notASession("nothing parses")},
	// Both give an empty file a fresh session id each time they read it.
	"dmg-empty":       {"info": freshEmptySession("empty or only blank lines")},
	"dmg-blank-lines": {"info": freshEmptySession("empty or only blank lines")},

	// pi discards the entries; arbor keeps them under a new header.
	"dmg-no-header": {
		"context": pathDeviation("first line not a header but entries parse", allEntries),
		"llm":     llmDeviation("first line not a header but entries parse", allEntries),
		"context-ffffffff": {"first line not a header but entries parse", func(t *testing.T, file string, r result, _ []byte) {
			if r.code != 1 || !strings.Contains(r.err, `no entry "ffffffff" in `) {
				t.Errorf("exit %d, stderr %q; want 'no entry \"ffffffff\"'", r.code, r.err)
			}
		}},
		"tree": {"first line not a header but entries parse", func(t *testing.T, file string, r result, _ []byte) {
			want := []flatNode{}
			prev := ""
			for _, e := range rawEntries(t, file) {
				want = append(want, flatNode{ID: e.ID, Type: e.Type, Parent: prev})
				prev = e.ID
			}
			if d := cmp.Diff(want, flatTree(reduceTree(t, []byte(r.out)))); d != "" {
				t.Errorf("tree is not the file's chain of entries (-want +arbor):\n%s", d)
			}
		}},
		"info": {"first line not a header but entries parse", func(t *testing.T, file string, r result, _ []byte) {
			es := rawEntries(t, file)
			i := decodeInfo(t, r)
			if i.EntryCount != len(es) || i.LeafID == nil || *i.LeafID != es[len(es)-1].ID || i.Damage == nil || !i.Damage.NoHeader || !uuidRE.MatchString(i.ID) {
				t.Errorf("info %+v: want %d entries, leaf %s, a new session id, and the missing header reported", i, len(es), es[len(es)-1].ID)
			}
		}},
	},

	// pi: the last entry with an id wins. arbor: the first wins and the later
	// one is reported; the reply that names the id hangs from the first.
	"dmg-dup-ids": {
		"context":          pathDeviation("duplicate ids", []string{"70cfef9d", "178acd41", "9636bd86", "c85d0220"}),
		"llm":              llmDeviation("duplicate ids", []string{"70cfef9d", "178acd41", "9636bd86", "c85d0220"}),
		"context-14daf340": pathDeviation("duplicate ids", []string{"70cfef9d", "178acd41", "9636bd86", "43ed5803", "bc74b417", "14daf340"}),
		"tree":             treeDeviation("duplicate ids", map[string]string{"9636bd86": "178acd41", "43ed5803": "9636bd86", "c85d0220": "9636bd86"}),
		"info": {"duplicate ids", func(t *testing.T, file string, r result, pi []byte) {
			i := decodeInfo(t, r)
			if i.EntryCount != 11 || i.LeafID == nil || *i.LeafID != "c85d0220" || i.Damage == nil || !cmp.Equal(i.Damage.DuplicateIDs, []string{"9636bd86"}) {
				t.Errorf("info %+v, damage %+v: want 11 entries (pi counts 12), leaf c85d0220, duplicate 9636bd86 reported", i, i.Damage)
			}
		}},
	},

	// pi drops the loop and everything under it from its tree, and hangs
	// building a context through it. arbor cuts each loop at its entry that
	// comes first in the file, which becomes a root.
	"dmg-cycle": {
		"tree": treeDeviation("parent chain with a loop", map[string]string{"ccccaaaa": "", "ccccbbbb": "ccccaaaa", "6f7b3c6f": "ccccaaaa", "cccccccc": ""}),
	},
	"dmg-cycle-leaf": {
		"context": pathDeviation("parent chain with a loop", []string{"ddddaaaa", "20a4e2da"}),
		"llm":     llmDeviation("parent chain with a loop", []string{"ddddaaaa", "20a4e2da"}),
		"tree":    treeDeviation("parent chain with a loop", map[string]string{"ddddaaaa": "", "ddddbbbb": "ddddaaaa", "20a4e2da": "ddddaaaa"}),
	},
	// An entry that is its own parent is a root; pi loops forever on it.
	"dmg-self-parent-leaf": {
		"context": pathDeviation("parent chain with a loop", []string{"eeeeeeee"}),
		"llm":     llmDeviation("parent chain with a loop", []string{"eeeeeeee"}),
	},
}

var allEntries = []string{"*"}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func notASession(row string) piDeviation {
	return piDeviation{row, func(t *testing.T, file string, r result, _ []byte) {
		if r.code != 1 || r.out != "" || strings.Count(r.err, "\n") != 1 || !strings.Contains(r.err, "is not a session file") || !strings.Contains(r.err, strings.TrimPrefix(file, "../../")) {
			t.Errorf("exit %d, stdout %q, stderr %q: want exit 1 and one line saying the file is not a session file", r.code, r.out, r.err)
		}
	}}
}

// freshEmptySession checks info of an empty file as pi reads it: no entries,
// no leaf, no name, and a session id of its own.
func freshEmptySession(row string) piDeviation {
	return piDeviation{row, func(t *testing.T, file string, r result, want []byte) {
		var pi piInfo
		if err := json.Unmarshal(want, &pi); err != nil {
			t.Fatal(err)
		}
		ours := arborInfo(t, []byte(r.out))
		if r.code != 0 || !uuidRE.MatchString(ours.SessionID) || ours.Entries != 0 || ours.LeafID != nil || ours.Name != nil || pi.Entries != 0 {
			t.Errorf("info: exit %d, %+v (pi %+v), stderr %q; want an empty session with an id of its own", r.code, ours, pi, r.err)
		}
	}}
}

func decodeInfo(t *testing.T, r result) Info {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	var i Info
	if err := json.Unmarshal([]byte(r.out), &i); err != nil {
		t.Fatal(err)
	}
	return i
}

// rawEntry is one line of a session file as the test reads it, without arbor.
type rawEntry struct {
	Type          string          `json:"type"`
	ID            string          `json:"id"`
	ThinkingLevel string          `json:"thinkingLevel"`
	Provider      string          `json:"provider"`
	ModelID       string          `json:"modelId"`
	Message       json.RawMessage `json:"message"`
}

// rawEntries reads the entries of a file in order, the first line of each id
// only, skipping headers and lines that are not JSON objects with an id.
func rawEntries(t *testing.T, file string) []rawEntry {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rawEntry
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var e rawEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.ID == "" || e.Type == "session" || seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		out = append(out, e)
	}
	return out
}

// pathMessages builds, independently of arbor, pi's context for a path of
// entries without compactions or summaries: the messages in order, the last
// thinking level and the model of the last assistant or model change.
func pathMessages(t *testing.T, file string, ids []string) (msgs []json.RawMessage, ctx []byte) {
	t.Helper()
	byID := map[string]rawEntry{}
	es := rawEntries(t, file)
	for _, e := range es {
		byID[e.ID] = e
	}
	if len(ids) == 1 && ids[0] == "*" {
		ids = nil
		for _, e := range es {
			ids = append(ids, e.ID)
		}
	}
	level, model := "off", "null"
	msgs = []json.RawMessage{}
	for _, id := range ids {
		e, ok := byID[id]
		if !ok {
			t.Fatalf("%s has no entry %s", file, id)
		}
		switch e.Type {
		case "thinking_level_change":
			level = e.ThinkingLevel
		case "model_change":
			model = `{"provider":` + strconv.Quote(e.Provider) + `,"modelId":` + strconv.Quote(e.ModelID) + `}`
		case "message":
			msgs = append(msgs, e.Message)
			var m struct{ Role, Provider, Model string }
			_ = json.Unmarshal(e.Message, &m)
			if m.Role == "assistant" {
				model = `{"provider":` + strconv.Quote(m.Provider) + `,"modelId":` + strconv.Quote(m.Model) + `}`
			}
		}
	}
	list, _ := json.Marshal(msgs)
	return msgs, []byte(`{"messages":` + string(list) + `,"thinkingLevel":` + strconv.Quote(level) + `,"model":` + model + `}`)
}

// pathDeviation checks that `context --json` is the context of exactly this
// path of entries ("*": every entry of a linear file).
func pathDeviation(row string, ids []string) piDeviation {
	return piDeviation{row, func(t *testing.T, file string, r result, _ []byte) {
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.err)
		}
		_, want := pathMessages(t, file, ids)
		if d := jsonDiff(want, []byte(r.out)); d != "" {
			t.Errorf("context is not that of the path %v (-want +arbor):\n%s", ids, d)
		}
	}}
}

// llmDeviation is pathDeviation for `--format llm`: the paths it is used on
// hold only user, assistant and tool result messages, which pass unchanged.
func llmDeviation(row string, ids []string) piDeviation {
	return piDeviation{row, func(t *testing.T, file string, r result, _ []byte) {
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.err)
		}
		msgs, _ := pathMessages(t, file, ids)
		want, _ := json.Marshal(msgs)
		if d := jsonDiff(want, []byte(r.out)); d != "" {
			t.Errorf("llm messages are not those of the path %v (-want +arbor):\n%s", ids, d)
		}
	}}
}

// treeDeviation checks that arbor's tree holds every entry of the file once,
// that the given entries hang where SPEC §5 says ("" for a root), and that
// every other entry hangs as it does in pi's tree.
func treeDeviation(row string, parents map[string]string) piDeviation {
	return piDeviation{row, func(t *testing.T, file string, r result, pi []byte) {
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.err)
		}
		got := flatTree(reduceTree(t, []byte(r.out)))
		count := map[string]int{}
		for _, n := range got {
			count[n.ID]++
		}
		for _, e := range rawEntries(t, file) {
			if count[e.ID] != 1 {
				t.Errorf("entry %s is %d times in the tree, want once", e.ID, count[e.ID])
			}
		}
		var piNodes []reducedNode
		if err := json.Unmarshal(pi, &piNodes); err != nil {
			t.Fatal(err)
		}
		piParent := map[string]string{}
		for _, n := range flatTree(piNodes) {
			piParent[n.ID] = n.Parent
		}
		for _, n := range got {
			want, special := parents[n.ID]
			if !special {
				want = piParent[n.ID]
			}
			if n.Parent != want {
				t.Errorf("entry %s hangs from %q, want %q", n.ID, n.Parent, want)
			}
		}
	}}
}

// sameTreeShape compares trees whose ids pi made up: nodes are named by
// their position in pre-order instead.
func sameTreeShape(t *testing.T, want, got []byte) {
	t.Helper()
	var pi []reducedNode
	if err := json.Unmarshal(want, &pi); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(anonymous(flatTree(pi)), anonymous(flatTree(reduceTree(t, got)))); d != "" {
		t.Errorf("tree shape differs from pi's (-pi +arbor):\n%s", d)
	}
}

func anonymous(ns []flatNode) []flatNode {
	pos := map[string]string{"": ""}
	for i, n := range ns {
		pos[n.ID] = "#" + strconv.Itoa(i)
	}
	out := make([]flatNode, len(ns))
	for i, n := range ns {
		out[i] = flatNode{ID: pos[n.ID], Type: n.Type, Label: n.Label, Parent: pos[n.Parent], Index: n.Index}
	}
	return out
}

// sameInfoShape compares info for a file whose ids pi made up.
func sameInfoShape(t *testing.T, want, got []byte) {
	t.Helper()
	var pi piInfo
	if err := json.Unmarshal(want, &pi); err != nil {
		t.Fatal(err)
	}
	ours := arborInfo(t, got)
	if pi.SessionID != ours.SessionID || !cmp.Equal(pi.Name, ours.Name) || pi.Entries != ours.Entries || (pi.LeafID == nil) != (ours.LeafID == nil) {
		t.Errorf("info differs from pi's: pi %+v, arbor %+v", pi, ours)
	}
	// The leaf ids cannot be compared; that both leaves are the same entry is
	// checked by the context at the default leaf, which must equal pi's.
}

// An empty file is an empty session, as pi 1.6.0 opens it: every reading
// command shows it as such, without calling it damage; a file with content
// but no session line is still refused.
func TestEmptyFileIsAnEmptySession(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runArbor(t, "", "context", empty, "--json"); r.code != 0 || r.out != "{\"messages\":[],\"thinkingLevel\":\"off\",\"model\":null}\n" {
		t.Errorf("context --json of an empty file: exit %d, %q, %q", r.code, r.out, r.err)
	}
	for _, args := range [][]string{{"info", empty}, {"tree", empty}, {"stats", empty}} {
		if r := runArbor(t, "", args...); r.code != 0 || strings.Contains(r.out, "damage") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.out, r.err)
		}
	}
	if info := decodeInfo(t, runArbor(t, "", "info", empty, "--json")); info.Damage != nil || info.EntryCount != 0 {
		t.Errorf("info --json of an empty file: %+v", info)
	}
	if st, err := os.Stat(empty); err != nil || st.Size() != 0 {
		t.Errorf("reading the empty file changed it: %v %v", st, err)
	}
	garbage := filepath.Join(dir, "garbage.jsonl")
	if err := os.WriteFile(garbage, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runArbor(t, "", "info", garbage); r.code != 1 || !strings.Contains(r.err, "is not a session file") {
		t.Errorf("info of a file without a session line: exit %d, %q", r.code, r.err)
	}
}
