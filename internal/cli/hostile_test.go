package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arborlog/arbor/agent/agenttest"
	"github.com/arborlog/arbor/internal/termtext"
	"github.com/arborlog/arbor/window/blob"
)

// hostile is what a session file can carry to attack the terminal that prints
// it: erase the screen, write the clipboard (OSC 52), set the window title
// (OSC 0), return the carriage, ring the bell, reverse the text (U+202E),
// break the line (U+2028, newline, tab), NUL, DEL, a one-byte CSI (U+009B)
// and bytes that are not UTF-8.
const hostile = "\x1b[2J\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\r\a\u202e\u2028\n\t\x00\x7f\u009b[31m\xff\xc3"

// hostileSeen is how the start of hostile must look wherever it is printed:
// escaped, so a reader sees what the file holds. (The goldens hold the rest;
// lines cut to the width and snippets with their matches marked hold less.)
const hostileSeen = `\x1b[2J`

// hostileLoaded is hostile as a session's reader gives it back: each byte
// that is not UTF-8 read as U+FFFD.
var hostileLoaded = strings.Replace(hostile, "\xff\xc3", "\ufffd\ufffd", 1)

// pathHostile is hostile as it can be in a file name (no NUL, no slash).
var pathHostile = strings.ReplaceAll(hostile, "\x00", "")

// jstr writes s as a JSON string the way a careless or hostile writer would:
// control characters escaped (JSON demands it), everything else raw, invalid
// UTF-8 included.
func jstr(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Every field of this session that arbor prints starts with a tag and carries hostile.
func hostileSession() string {
	h := func(tag string) string { return jstr(tag + hostile) }
	ts := func(n int) string { return fmt.Sprintf(`"2020-01-15T12:00:%02d.000Z"`, n) }
	ms := func(n int) string { return fmt.Sprint(1579089600000 + n*1000) }
	lines := []string{
		`{"type":"session","version":3,"id":` + jstr("0195f1c2-ID"+pathHostile) + `,"timestamp":` + ts(0) + `,"cwd":` + jstr("/home/dev/CWD"+pathHostile) + `}`,
		`{"type":"model_change","id":"m0","parentId":null,"timestamp":` + ts(0) + `,"provider":` + h("PROVIDER") + `,"modelId":` + h("MODEL") + `}`,
		`{"type":"message","id":` + h("U1") + `,"parentId":"m0","timestamp":` + ts(1) + `,"message":{"role":"user","content":` + h("FIRST") + `,"timestamp":` + ms(1) + `}}`,
		`{"type":"message","id":"a1","parentId":` + h("U1") + `,"timestamp":` + ts(2) + `,"message":{"role":"assistant","content":[{"type":"thinking","thinking":` + h("THINK") + `},{"type":"text","text":` + h("TEXT") + `},{"type":"toolCall","id":"call1","name":"read","arguments":{"path":` + h("FILE") + `}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":10,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":20,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":` + ms(2) + `}}`,
		`{"type":"message","id":"t1","parentId":"a1","timestamp":` + ts(3) + `,"message":{"role":"toolResult","toolCallId":"call1","toolName":` + h("TOOLNAME") + `,"content":[{"type":"text","text":` + h("TOOL") + `}],"isError":false,"timestamp":` + ms(3) + `}}`,
		`{"type":"message","id":"b1","parentId":"t1","timestamp":` + ts(4) + `,"message":{"role":"bashExecution","command":` + h("BASH") + `,"output":` + h("OUT") + `,"exitCode":0,"cancelled":false,"truncated":false,"timestamp":` + ms(4) + `}}`,
		`{"type":"compaction","id":"x1","parentId":"b1","timestamp":` + ts(5) + `,"summary":` + h("SUMMARY") + `,"firstKeptEntryId":"a1","tokensBefore":5000,"details":{"readFiles":[` + h("READ") + `],"modifiedFiles":[]}}`,
		`{"type":"message","id":"a2","parentId":"x1","timestamp":` + ts(6) + `,"message":{"role":"assistant","content":[{"type":"text","text":` + h("REPLY") + `}],"api":"anthropic-messages","provider":"anthropic","model":` + h("MODEL") + `,"usage":{"input":10,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":20,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":` + ms(6) + `}}`,
		`{"type":"label","id":"l1","parentId":"a2","timestamp":` + ts(7) + `,"targetId":"a1","label":` + h("LABEL") + `}`,
		`{"type":"session_info","id":"n1","parentId":"l1","timestamp":` + ts(8) + `,"name":` + h("NAME") + `}`,
		`{"type":"custom","id":"k1","parentId":"a2","timestamp":` + ts(9) + `,"cursor":` + h("CURID") + `,"customType":"arbor.cursor","data":{"name":` + h("CURSOR") + `}}`,
	}
	return strings.Join(lines, "\n") + "\n"
}

// hostileFields carries hostile in the fields hostileSession leaves out: the
// parent session, a thinking level, an image's MIME type, a tool call's
// id and argument keys, an assistant's api, stop reason and error message,
// usage figures that are strings, a custom message, a custom_message entry,
// a custom entry, context edits, a branch summary and an unknown entry type.
func hostileFields() string {
	h := func(tag string) string { return jstr(tag + hostile) }
	ts := func(n int) string { return fmt.Sprintf(`"2020-01-15T12:01:%02d.000Z"`, n) }
	ms := func(n int) string { return fmt.Sprint(1579089660000 + n*1000) }
	img := `{"type":"image","data":"R0lGODlhAQABAAAAACw=","mimeType":`
	lines := []string{
		`{"type":"session","version":3,"id":"0195f1c2-ffff-7fff-8fff-ffffffffffff","timestamp":` + ts(0) + `,"cwd":"/p","parentSession":` + jstr("/p/PARENT"+pathHostile+".jsonl") + `}`,
		`{"type":"thinking_level_change","id":"th","parentId":null,"timestamp":` + ts(0) + `,"thinkingLevel":` + h("LEVEL") + `}`,
		`{"type":"message","id":"u1","parentId":"th","timestamp":` + ts(1) + `,"message":{"role":"user","content":[{"type":"text","text":"look"},` + img + h("MIME") + `}],"timestamp":` + ms(1) + `}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":` + ts(2) + `,"message":{"role":"assistant","content":[{"type":"toolCall","id":` + h("CALLID") + `,"name":"read","arguments":{` + h("ARGKEY") + `:` + h("ARGVAL") + `}}],"api":` + h("API") + `,"provider":` + h("APROV") + `,"model":` + h("AMODEL") + `,"usage":{"input":` + h("UIN") + `,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":` + h("UTOT") + `,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":` + h("UCOST") + `}},"stopReason":` + h("STOP") + `,"errorMessage":` + h("ERRMSG") + `,"timestamp":` + ms(2) + `}}`,
		`{"type":"message","id":"t1","parentId":"a1","timestamp":` + ts(3) + `,"message":{"role":"toolResult","toolCallId":` + h("CALLID") + `,"toolName":"read","content":[{"type":"text","text":"seen"},` + img + h("TMIME") + `}],"isError":true,"timestamp":` + ms(3) + `}}`,
		`{"type":"message","id":"c1","parentId":"t1","timestamp":` + ts(4) + `,"message":{"role":"custom","customType":` + h("CTYPE") + `,"content":` + h("CCONTENT") + `,"display":true,"timestamp":` + ms(4) + `}}`,
		`{"type":"custom_message","customType":` + h("CMTYPE") + `,"content":[{"type":"text","text":` + h("CMTEXT") + `}],"display":true,"id":"cm1","parentId":"c1","timestamp":` + ts(5) + `}`,
		`{"type":"custom","customType":` + h("CUSTOMTYPE") + `,"data":{"x":` + h("CDATA") + `},"id":"cu1","parentId":"cm1","timestamp":` + ts(6) + `}`,
		`{"type":"context_edit","id":"ce1","parentId":"cu1","timestamp":` + ts(7) + `,"targetId":"t1","replacement":{"content":[{"type":"text","text":` + h("REPL") + `}]}}`,
		`{"type":"context_edit","id":"ce2","parentId":"ce1","timestamp":` + ts(8) + `,"targetId":` + h("CETARGET") + `,"replacement":null}`,
		`{"type":"branch_summary","id":"bs1","parentId":"ce2","timestamp":` + ts(9) + `,"fromId":` + h("FROM") + `,"summary":` + h("BSUM") + `,"details":{"readFiles":[` + h("BREAD") + `],"modifiedFiles":[]}}`,
		`{"type":` + h("WEIRDTYPE") + `,"id":"w1","parentId":"bs1","timestamp":` + ts(10) + `}`,
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestHostileFields runs the commands that print these fields on
// hostileFields, piped and on a terminal: nothing a terminal would act on
// gets through, and each field is there, escaped (tool arguments and the
// entries show prints are JSON, which escapes ESC as \u001b).
func TestHostileFields(t *testing.T) {
	home := catalogHome(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "fields.jsonl")
	if err := os.WriteFile(file, []byte(hostileFields()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"fields-info", []string{"info", file}, []string{"PARENT"}},
		{"fields-context", []string{"context", file}, []string{"MIME", "CCONTENT", "CMTEXT", "REPL", "BSUM", "LEVEL", "AMODEL"}},
		{"fields-tree", []string{"tree", file, "--filter", "all"}, []string{"LEVEL", "ERRMSG", "CMTYPE", "CUSTOMTYPE", "CETARGET", "BSUM", "WEIRDTYPE"}},
		{"fields-show-assistant", []string{"show", file, "a1"}, nil}, // JSON: escaped as JSON
		{"fields-show-branch-summary", []string{"show", file, "bs1"}, nil},
		{"fields-stats", []string{"stats", file}, nil},
		{"fields-export-md", []string{"export", file, "--format", "md", "-"}, []string{"MIME", "STOP", "ERRMSG", "CTYPE", "CMTEXT", "FROM", "BSUM"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runTerminal(t, tc.args...)
			assertPrintable(t, "stdout", ownColours.Replace(r.out))
			assertPrintable(t, "stderr", r.err)
			if p := runArbor(t, "", tc.args...); tc.args[0] != "export" {
				assertPrintable(t, "stdout piped", p.out)
				assertPrintable(t, "stderr piped", p.err)
			}
			for _, tag := range tc.want {
				if !strings.Contains(r.out+r.err, tag+hostileSeen) {
					t.Errorf("%s%s is not in the output, escaped:\n%s", tag, hostileSeen, r.out+r.err)
				}
			}
			r.out = ownColours.Replace(r.out) // the golden without arbor's colours
			golden(t, filepath.Join("hostile", tc.name+".golden"), hostileGolden(r, dir, home))
		})
	}
}

// hostileDamaged has damage whose report quotes ids: a duplicate id and an
// entry whose parent is unknown.
func hostileDamaged() string {
	hdr := `{"type":"session","version":3,"id":"0195f1c2-dddd-7ddd-8ddd-dddddddddddd","timestamp":"2020-01-15T12:00:00.000Z","cwd":"/p"}`
	msg := func(id, parent string) string {
		return `{"type":"message","id":` + jstr(id) + `,"parentId":` + parent + `,"timestamp":"2020-01-15T12:00:01.000Z","message":{"role":"user","content":"x","timestamp":1579089601000}}`
	}
	return strings.Join([]string{hdr, msg("DUP"+hostile, "null"), msg("DUP"+hostile, "null"), msg("ORPHAN"+hostile, jstr("PARENT"+hostile)), "{\x1b[2J not json"}, "\n") + "\n"
}

// hostileExplain has what context --budget --explain names: ids and a role
// that carry hostile (with its newline and tab), a call without its result,
// a result without its call and a tool result long enough to be cut.
func hostileExplain() string {
	ts := func(n int) string { return fmt.Sprintf(`"2020-01-15T12:00:%02d.000Z"`, n) }
	ms := func(n int) string { return fmt.Sprint(1579089600000 + n*1000) }
	usage := `"usage":{"input":10,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":20,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}`
	long := strings.Repeat("words to outline ", 60)
	lines := []string{
		`{"type":"session","version":3,"id":"0195f1c2-eeee-7eee-8eee-eeeeeeeeeeee","timestamp":` + ts(0) + `,"cwd":"/p"}`,
		`{"type":"message","id":` + jstr("U1"+hostile) + `,"parentId":null,"timestamp":` + ts(1) + `,"message":{"role":"user","content":` + jstr("first "+long) + `,"timestamp":` + ms(1) + `}}`,
		`{"type":"message","id":` + jstr("A1"+hostile) + `,"parentId":` + jstr("U1"+hostile) + `,"timestamp":` + ts(2) + `,"message":{"role":"assistant","content":[{"type":"text","text":` + jstr(long) + `},{"type":"toolCall","id":` + jstr("CALL"+hostile) + `,"name":"read","arguments":{"path":"a"}},{"type":"toolCall","id":"call2","name":"read","arguments":{"path":"b"}}],"api":"anthropic-messages","provider":"anthropic","model":"m",` + usage + `,"stopReason":"toolUse","timestamp":` + ms(2) + `}}`,
		`{"type":"message","id":` + jstr("T2"+hostile) + `,"parentId":` + jstr("A1"+hostile) + `,"timestamp":` + ts(3) + `,"message":{"role":"toolResult","toolCallId":"call2","toolName":"read","content":[{"type":"text","text":` + jstr(strings.Repeat("output line\n", 400)) + `}],"isError":false,"timestamp":` + ms(3) + `}}`,
		`{"type":"message","id":` + jstr("T3"+hostile) + `,"parentId":` + jstr("T2"+hostile) + `,"timestamp":` + ts(4) + `,"message":{"role":"toolResult","toolCallId":` + jstr("ORPHAN"+hostile) + `,"toolName":"read","content":[{"type":"text","text":"lost"}],"isError":false,"timestamp":` + ms(4) + `}}`,
		`{"type":"message","id":"a2","parentId":` + jstr("T3"+hostile) + `,"timestamp":` + ts(5) + `,"message":{"role":"assistant","content":[{"type":"text","text":` + jstr(long) + `}],"api":"anthropic-messages","provider":"anthropic","model":"m",` + usage + `,"stopReason":"stop","timestamp":` + ms(5) + `}}`,
		`{"type":"message","id":"u2","parentId":"a2","timestamp":` + ts(6) + `,"message":{"role":"user","content":"last","timestamp":` + ms(6) + `}}`,
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestHostileText runs every command that prints text a session supplied on
// sessions full of terminal escapes, checks that none of it reaches stdout or
// stderr as it is and that each field is still there, escaped, and compares the
// output with testdata/hostile/<case>.golden (go test -update rewrites them).
// The cases run in order on the same files: the edits change what later ones print.
func TestHostileText(t *testing.T) {
	home := catalogHome(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "hostile.jsonl")
	named := filepath.Join(dir, "sub", "S"+pathHostile+".jsonl") // a hostile file name, alone in its folder
	if err := os.Mkdir(filepath.Dir(named), 0o700); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "damaged.jsonl")
	for f, data := range map[string]string{file: hostileSession(), named: hostileSession(), damaged: hostileDamaged()} {
		if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	u1 := "U1" + hostileLoaded
	tests := []struct {
		name string
		args []string
		want []string // tags that must be visible, each followed by hostileSeen
	}{
		{"ls", []string{"ls", "--session-dir", dir}, []string{"NAME", "CWD"}},
		{"info", []string{"info", file}, []string{"ID", "CWD", "NAME", "CURID", "CURSOR"}},
		{"name", []string{"name", file}, []string{"NAME"}},
		{"cursor-ls", []string{"cursor", "ls", file}, []string{"CURID", "CURSOR"}},
		{"context", []string{"context", file}, []string{"SUMMARY", "THINK", "TEXT", "TOOLNAME", "TOOL", "BASH", "OUT", "REPLY", "MODEL"}},
		{"tree", []string{"tree", file}, []string{"U1", "LABEL", "FILE", "BASH", "CURSOR"}},
		{"search", []string{"search", "--session-dir", dir, "ZXZpbA"}, []string{"FIRST", "TOOL"}},
		{"show-message", []string{"show", file, "a1"}, []string{"LABEL"}},
		{"show-compaction", []string{"show", file, "x1"}, []string{"U1", "SUMMARY"}},
		{"stats", []string{"stats", file}, nil},
		{"fsck", []string{"fsck", damaged}, []string{"DUP", "ORPHAN"}},
		{"compact-dry-run", []string{"compact", file, "--dry-run", "--keep-recent-tokens", "1"}, []string{"FILE"}},
		{"compact-undo", []string{"compact", file, "--undo"}, nil},
		{"branch", []string{"branch", file, u1}, []string{"U1"}},
		{"label-unknown", []string{"label", file, "U1" + hostile, "x"}, []string{"U1"}},
		{"branch-cursor", []string{"branch", file, "a1", "--cursor", "CURSOR" + hostileLoaded}, []string{"CURSOR"}},
		// What a user types that is not UTF-8 is refused; the rest is taken as given.
		{"label-not-utf8", []string{"label", file, u1, "NEW" + hostile}, nil},
		{"label", []string{"label", file, u1, "NEW" + hostileLoaded}, []string{"U1", "NEW"}},
		{"cursor-rename-not-utf8", []string{"cursor", "rename", file, "CURSOR" + hostileLoaded, "RENAMED" + hostile}, nil},
		{"cursor-rename", []string{"cursor", "rename", file, "CURSOR" + hostileLoaded, "RENAMED" + hostileLoaded}, []string{"CURID", "RENAMED"}},
		{"cursor-switch", []string{"cursor", "switch", file, "RENAMED" + hostileLoaded}, []string{"RENAMED"}},
		{"pin", []string{"pin", file, u1, "--cursor", "RENAMED" + hostileLoaded}, []string{"U1", "CURID"}},
		{"rename-not-utf8", []string{"rename", named, "NAME2" + hostile}, nil},
		{"rename", []string{"rename", named, "NAME2" + hostileLoaded}, []string{"S", "NAME2"}},
		{"latest", []string{"latest", "--session-dir", filepath.Dir(named)}, []string{"S"}},
		{"show-missing", []string{"show", named, "NOPE" + hostile}, []string{"S", "NOPE"}},
		{"info-missing", []string{"info", filepath.Join(dir, "GONE"+pathHostile+".jsonl")}, []string{"GONE"}},
		{"rm", []string{"rm", named}, []string{"S", "ID"}},
		{"restore-list", []string{"restore", "--list"}, []string{"S", "NAME2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runArbor(t, "", tc.args...)
			for stream, text := range map[string]string{"stdout": r.out, "stderr": r.err} {
				assertPrintable(t, stream, text)
			}
			all := r.out + r.err
			for _, tag := range tc.want {
				if !strings.Contains(all, tag+hostileSeen) {
					t.Errorf("%s%s is not in the output, escaped:\n%s", tag, hostileSeen, all)
				}
			}
			golden(t, filepath.Join("hostile", tc.name+".golden"), hostileGolden(r, dir, home))
		})
	}
}

// context --explain names entries and tool calls by their ids, one line
// each: an id's newline is escaped with the rest, so a session cannot add a
// line that reads as the planner's.
func TestHostileExplain(t *testing.T) {
	home := catalogHome(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "explain.jsonl")
	if err := os.WriteFile(file, []byte(hostileExplain()), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runArbor(t, "", "context", file, "--budget", "1000", "--explain")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	assertPrintable(t, "stdout", r.out)
	assertPrintable(t, "stderr", r.err)
	own := regexp.MustCompile(`^(budget \d+ tokens|\d+ cut, |cut        |outlined   |summarized |left out   |closed     tool call |orphan     )`)
	for _, line := range strings.Split(strings.TrimSuffix(r.err, "\n"), "\n") {
		if !own.MatchString(line) {
			t.Errorf("--explain printed a line that is not its own: %q", line)
		}
	}
	for _, tag := range []string{"T2", "A1", "CALL", "T3"} {
		if !strings.Contains(r.err, tag+hostileSeen) {
			t.Errorf("%s%s is not in --explain, escaped:\n%s", tag, hostileSeen, r.err)
		}
	}
	golden(t, filepath.Join("hostile", "context-explain.golden"), hostileGolden(r, dir, home))
}

// assertPrintable fails when text holds anything a terminal would act on:
// bytes that are not UTF-8 or a forbidden character other than newline and tab.
func assertPrintable(t *testing.T, stream, text string) {
	t.Helper()
	if !utf8.ValidString(text) {
		t.Errorf("%s is not UTF-8: %q", stream, text)
	}
	for i, r := range text {
		if termtext.Forbidden(r) && r != '\n' && r != '\t' {
			t.Errorf("%s holds %U at byte %d: %q", stream, r, i, text)
			return
		}
	}
}

var (
	rfc3339 = regexp.MustCompile(`\b20[2-9]\d-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	fixed   = regexp.MustCompile(`^2020-01-15T12:`)
	entryID = regexp.MustCompile(`\b[0-9a-f]{8}\b`)
)

// hostileGolden is what a golden file holds: the output with the temporary
// folders, the current time and the ids of entries arbor wrote replaced.
func hostileGolden(r result, dir, home string) string {
	s := fmt.Sprintf("--- stdout\n%s--- stderr\n%s--- exit %d\n", r.out, r.err, r.code)
	s = strings.ReplaceAll(s, dir, "$DIR")
	s = strings.ReplaceAll(s, home, "$ARBOR_DIR")
	s = entryID.ReplaceAllStringFunc(s, func(id string) string {
		if id == "0195f1c2" { // the sessions' id, cut to 8 characters by ls and restore
			return id
		}
		return "$NEWID"
	})
	return rfc3339.ReplaceAllStringFunc(s, func(ts string) string {
		if fixed.MatchString(ts) {
			return ts
		}
		return "$NOW"
	})
}

// The --json forms stay exact: valid JSON whatever the session holds, with the
// hostile text given back as the file has it (JSON escapes what it must).
func TestHostileJSON(t *testing.T) {
	catalogHome(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "hostile.jsonl")
	if err := os.WriteFile(file, []byte(hostileSession()), 0o600); err != nil {
		t.Fatal(err)
	}
	valid := hostileLoaded
	node, _ := exec.LookPath("node") // without Node, JSON.parse is not tried
	for _, tc := range []struct {
		args []string
		want string // a value the output must hold
	}{
		{[]string{"info", file}, "NAME" + valid},
		{[]string{"name", file}, "NAME" + valid},
		{[]string{"cursor", "ls", file}, "CURSOR" + valid},
		{[]string{"ls", "--session-dir", dir}, "NAME" + valid},
		{[]string{"context", file}, "REPLY" + valid},
		{[]string{"tree", file}, "LABEL" + valid},
		{[]string{"show", file, "x1"}, "FIRST" + valid},
		{[]string{"search", "--session-dir", dir, "ZXZpbA"}, "TOOL\x1b[2J\x1b]52;c;ZXZpbA==\a"}, // snippets fold white space
	} {
		r := runArbor(t, "", append(tc.args, "--json")...)
		if r.code != 0 {
			t.Errorf("arbor %s --json: exit %d: %s", tc.args[0], r.code, r.err)
			continue
		}
		if strings.ContainsFunc(strings.TrimSuffix(r.out, "\n"), func(r rune) bool { return r < 0x20 }) {
			t.Errorf("arbor %s --json printed a raw control character: %q", tc.args[0], r.out)
		}
		var v any
		if err := json.Unmarshal([]byte(r.out), &v); err != nil {
			t.Errorf("arbor %s --json is not JSON: %v", tc.args[0], err)
			continue
		}
		if !holds(v, tc.want) {
			t.Errorf("arbor %s --json does not give back %q exactly:\n%s", tc.args[0], tc.want, r.out)
		}
		// pi reads arbor's JSON with JSON.parse: raw U+2028, U+202E, DEL must not trouble it.
		if node != "" {
			cmd := exec.Command(node, "-e", `JSON.parse(require("fs").readFileSync(0, "utf8"))`)
			cmd.Stdin = strings.NewReader(r.out)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("JSON.parse rejects arbor %s --json: %v %s", tc.args[0], err, msg)
			}
		}
	}
}

// holds reports whether s is a string somewhere in v, or inside one.
func holds(v any, s string) bool {
	switch v := v.(type) {
	case string:
		if strings.Contains(v, s) {
			return true
		}
		var inner any
		return json.Unmarshal([]byte(v), &inner) == nil && holds(inner, s)
	case []any:
		for _, x := range v {
			if holds(x, s) {
				return true
			}
		}
	case map[string]any:
		for _, x := range v {
			if holds(x, s) {
				return true
			}
		}
	}
	return false
}

// runTerminal runs the arbor command as if stdout and stderr were a terminal
// (colour on), which is where escapes do harm.
func runTerminal(t *testing.T, args ...string) result {
	t.Helper()
	r := runFake(t, 100, true, "", args...)
	if r.code != 0 {
		t.Fatalf("arbor %s: exit %d: %s", strings.Join(args, " "), r.code, r.err)
	}
	return r
}

// ownColours are the only escape sequences arbor writes itself.
var ownColours = func() *strings.Replacer {
	var pairs []string
	for _, code := range append(slices.Collect(maps.Values(ansi)), "\x1b[0m", "\x1b[1;33m", "\x1b[31m", "\x1b[32m", "\x1b[33m") {
		pairs = append(pairs, code, "")
	}
	return strings.NewReplacer(pairs...)
}()

// On a terminal arbor colours its output; the colours are its own, and
// nothing from the session gets through beside them.
func TestHostileTerminal(t *testing.T) {
	home := catalogHome(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "hostile.jsonl")
	if err := os.WriteFile(file, []byte(hostileSession()), 0o600); err != nil {
		t.Fatal(err)
	}
	ref, err := blob.Store{Dir: filepath.Join(home, "blobs")}.Put([]byte("TOOL" + hostile))
	if err != nil {
		t.Fatal(err)
	}
	system := filepath.Join(t.TempDir(), "system.jsonl")
	if err := os.WriteFile(system, []byte(`{"type":"session","version":3,"id":"0195f1c2-sys","timestamp":"2020-01-15T12:00:00.000Z","cwd":"/w"}
{"type":"message","id":"s1","parentId":null,"timestamp":"2020-01-15T12:00:01.000Z","message":{"role":"system","content":`+jstr("SYS"+hostile)+`,"timestamp":1579089601000}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"tree", file},
		{"search", "--session-dir", dir, "ZXZpbA"},
		{"stats", file},
		{"ls", "--session-dir", dir},
		{"context", file},
		{"blob", ref},
		{"context", system, "--system"},
		{"export", file, "--format", "md", "-"},
		{"export", file, "--format", "jsonl", "-"}, // JSON escapes ESC; U+202E and U+009B are as the file has them
		{"export", file, "--format", "html", "-"},
	} {
		r := runTerminal(t, args...)
		// stats prints numbers; JSONL and the page hold the text JSON-escaped.
		if shows := args[0] != "stats" && !slices.Contains(args, "jsonl") && !slices.Contains(args, "html"); shows && !strings.Contains(r.out, hostileSeen) {
			t.Errorf("arbor %s on a terminal does not show the session's text:\n%s", args[0], r.out)
		}
		if args[0] == "tree" || args[0] == "search" || args[0] == "stats" {
			if !strings.Contains(r.out, "\x1b[0m") {
				t.Errorf("arbor %s on a terminal is not coloured", args[0])
			}
		}
		assertPrintable(t, "arbor "+args[0]+" stdout", ownColours.Replace(r.out))
		assertPrintable(t, "arbor "+args[0]+" stderr", r.err)
	}
	// Piped, a blob, a system prompt and an export are printed as made.
	if r := runArbor(t, "", "blob", ref); r.out != "TOOL"+hostile {
		t.Errorf("arbor blob piped = %q, want the bytes stored", r.out)
	}
	if r := runArbor(t, "", "context", system, "--system"); r.out != "SYS"+hostileLoaded+"\n" {
		t.Errorf("arbor context --system piped = %q, want the prompt as recorded", r.out)
	}
	if r := runArbor(t, "", "export", file, "--format", "md", "-"); !strings.Contains(r.out, "TEXT"+strings.TrimRight(hostileLoaded, "\n")) {
		t.Errorf("arbor export --format md piped does not hold the text as recorded:\n%q", r.out)
	}
}

// arbor -p prints the model's answer as it came when piped and escaped on a
// terminal; a provider's error quoting hostile text is one escaped line.
func TestHostileReply(t *testing.T) {
	catalogHome(t)
	t.Setenv("ARBOR_API_KEY", "k")
	t.Chdir(t.TempDir())
	reply := "REPLY" + hostileLoaded
	s := agenttest.New(t, "openai", agenttest.Reply{Text: reply, Chunk: 1 << 10}, agenttest.Reply{Text: reply, Chunk: 1 << 10},
		agenttest.Reply{Status: 400, Body: `{"error":{"message":` + jstr("ERR"+hostile) + `}}`})
	args := []string{"--provider", "openai", "--base-url", s.BaseURL(), "--model", "m", "--no-session", "-p", "hi"}
	tty := runTerminal(t, args...)
	assertPrintable(t, "stdout", tty.out)
	assertPrintable(t, "stderr", tty.err)
	if want := termtext.Block(reply) + "\n"; tty.out != want {
		t.Errorf("arbor -p on a terminal = %q, want %q", tty.out, want)
	}
	if piped := runArbor(t, "", args...); piped.out != reply+"\n" {
		t.Errorf("arbor -p piped = %q, want the answer as it came", piped.out)
	}
	failed := runArbor(t, "", args...)
	assertPrintable(t, "stderr", failed.err)
	if failed.code != 1 || !strings.Contains(failed.err, "ERR"+hostileSeen) || strings.Count(failed.err, "\n") != 1 {
		t.Errorf("a provider's error: exit %d, stderr %q", failed.code, failed.err)
	}
}
