package export

import (
	"encoding/json"
	"strings"
	"testing"
)

// canary is what every payload of the corpus does if it ever runs.
const canary = `document.title='PWNED';window.__arborPwned=1`

// payloads are hostile Markdown and HTML a model or a user could put in a
// session. None may run, and the text must still be shown as text.
var payloads = []string{
	`<script>` + canary + `</script>`,
	`<img src=x onerror="` + canary + `">`,
	`<svg onload="` + canary + `"><circle r=1 /></svg>`,
	`<iframe src="javascript:parent.__arborPwned=1"></iframe>`,
	`<a href="javascript:` + canary + `">raw link</a>`,
	`[click](javascript:` + canary + `)`,
	`[click](JaVaScRiPt:window.__arborPwned=1)`,
	`[click]( javascript:window.__arborPwned=1)`,
	"[click](java\tscript:window.__arborPwned=1)",
	`[click](&#106;avascript:window.__arborPwned=1)`,
	`[click](vbscript:msgbox)`,
	`[click](data:text/html,<script>` + canary + `</script>)`,
	`[click](data:text/html;base64,PHNjcmlwdD5wYXJlbnQuX19hcmJvclB3bmVkPTE8L3NjcmlwdD4=)`,
	`[t](http://example.com/ 'T" onmouseover="` + canary + `')`,
	`[t](http://example.com/"onmouseover="window.__arborPwned=1)`,
	`![i](<x" onerror="` + canary + `>)`,
	`![i](x" onerror="window.__arborPwned=1)`,
	`![i](data:image/png;base64,x" onerror="window.__arborPwned=1)`,
	`![svg](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9InBhcmVudC5fX2FyYm9yUHduZWQ9MSIvPg==)`,
	`<http://example.com/"><script>` + canary + `</script>>`,
	`</script><script>` + canary + `</script>`,
	`<!-- <script>` + canary + `</script> -->`,
	"`code </script><script>" + canary + "</script>`",
	"```html\n</script><script>" + canary + "</script>\n```",
	`$& $` + "`" + ` $' $$ ${window.__arborPwned=1} {{.CSP}} {{template "x"}}`,
	"line\u2028separator\u2029paragraph",
	`<style>body{display:none}</style><base href="http://example.com/"><meta http-equiv="refresh" content="0;url=javascript:window.__arborPwned=1">`,
	`<form action="javascript:window.__arborPwned=1"><button>go</button></form>`,
	`<math><mtext><table><mglyph><style><img src=x onerror="` + canary + `">`,
	`**<img src=x onerror="` + canary + `">** _[x](javascript:window.__arborPwned=1)_`,
}

var hostile = strings.Join(payloads, "\n\n")

// xssCorpus is a session whose every field a page shows carries the payloads:
// the folder, the name, ids, labels, model and tool names, arguments, results,
// image types and data, summaries, custom entries.
func xssCorpus(t testing.TB) []byte {
	t.Helper()
	evilID := `e"'</script><script>` + canary + `</script>`
	lines := []map[string]any{
		{"type": "session", "version": 3, "id": "xss-" + evilID, "timestamp": "2026-12-01T00:00:00.000Z", "cwd": "/tmp/<script>" + canary + "</script>"},
		{"type": "model_change", "id": "m1", "parentId": nil, "timestamp": "2026-12-01T00:00:01.000Z", "provider": `<img src=x onerror="` + canary + `">`, "modelId": "</script>"},
		{"type": "message", "id": "u1", "parentId": "m1", "timestamp": "2026-12-01T00:00:02.000Z", "message": map[string]any{"role": "user", "content": hostile, "timestamp": 1}},
		{"type": "message", "id": evilID, "parentId": "u1", "timestamp": "2026-12-01T00:00:03.000Z", "message": map[string]any{
			"role": "assistant", "provider": "<b>p</b>", "model": `"><img src=x onerror="` + canary + `">`, "stopReason": "toolUse",
			"content": []any{
				map[string]any{"type": "thinking", "thinking": hostile},
				map[string]any{"type": "text", "text": hostile},
				map[string]any{"type": "toolCall", "id": "c1", "name": "bash", "arguments": map[string]any{"command": hostile}},
				map[string]any{"type": "toolCall", "id": "c2", "name": "edit", "arguments": map[string]any{"path": "<svg onload=1>.go", "oldText": hostile, "newText": hostile}},
				map[string]any{"type": "toolCall", "id": "c3", "name": `<svg onload="` + canary + `">`, "arguments": map[string]any{"x": hostile}},
				map[string]any{"type": "toolCall", "id": "c4", "name": "read", "arguments": map[string]any{"path": `x.js"><script>` + canary + `</script>`}},
				map[string]any{"type": "toolCall", "id": "c5", "name": "write", "arguments": map[string]any{"path": "a.html", "content": hostile}},
			}}},
		{"type": "message", "id": "r1", "parentId": evilID, "timestamp": "2026-12-01T00:00:04.000Z", "message": map[string]any{"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": []any{
			map[string]any{"type": "text", "text": hostile},
			map[string]any{"type": "image", "mimeType": `image/png" onerror="` + canary + `"`, "data": "AAAA"},
			map[string]any{"type": "image", "mimeType": "image/png", "data": `AAAA" onerror="` + canary + `"`},
			map[string]any{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="},
		}, "isError": false, "timestamp": 2}},
		{"type": "message", "id": "r2", "parentId": "r1", "timestamp": "2026-12-01T00:00:05.000Z", "message": map[string]any{"role": "toolResult", "toolCallId": "c2", "toolName": "edit", "content": hostile, "details": map[string]any{"diff": hostile}, "timestamp": 3}},
		{"type": "message", "id": "r3", "parentId": "r2", "timestamp": "2026-12-01T00:00:06.000Z", "message": map[string]any{"role": "toolResult", "toolCallId": "c3", "toolName": `<svg onload="` + canary + `">`, "content": []any{map[string]any{"type": "text", "text": hostile}}, "timestamp": 4}},
		{"type": "message", "id": "r4", "parentId": "r3", "timestamp": "2026-12-01T00:00:07.000Z", "message": map[string]any{"role": "toolResult", "toolCallId": "c4", "toolName": "read", "content": []any{map[string]any{"type": "text", "text": hostile}}, "timestamp": 5}},
		{"type": "message", "id": "b1", "parentId": "r4", "timestamp": "2026-12-01T00:00:08.000Z", "message": map[string]any{"role": "bashExecution", "command": hostile, "output": hostile, "exitCode": 1, "timestamp": 6}},
		{"type": "label", "id": "l1", "parentId": "b1", "timestamp": "2026-12-01T00:00:09.000Z", "targetId": "u1", "label": `<img src=x onerror="` + canary + `">`},
		{"type": "session_info", "id": "s1", "parentId": "l1", "timestamp": "2026-12-01T00:00:10.000Z", "name": `<script>` + canary + `</script>`},
		{"type": "compaction", "id": "k1", "parentId": "s1", "timestamp": "2026-12-01T00:00:11.000Z", "summary": hostile, "firstKeptEntryId": "b1", "tokensBefore": 5},
		{"type": "custom_message", "id": "cm1", "parentId": "k1", "timestamp": "2026-12-01T00:00:12.000Z", "customType": `<img src=x onerror="` + canary + `">`, "content": hostile, "display": true},
		{"type": "custom", "id": "cu1", "parentId": "cm1", "timestamp": "2026-12-01T00:00:13.000Z", "customType": "<script>x</script>", "data": map[string]any{"html": hostile}},
		{"type": "message", "id": "side", "parentId": "u1", "timestamp": "2026-12-01T00:00:14.000Z", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": hostile}}, "stopReason": "error", "errorMessage": hostile, "timestamp": 7}},
		{"type": "branch_summary", "id": "bs1", "parentId": "cu1", "timestamp": "2026-12-01T00:00:15.000Z", "fromId": "side", "summary": hostile},
		{"type": "message", "id": "sys", "parentId": "bs1", "timestamp": "2026-12-01T00:00:15.500Z", "message": map[string]any{"role": "system", "content": hostile, "sections": map[string]any{`<img src=x onerror="` + canary + `">`: hostile, "gone": nil}, "toolsAdded": []any{map[string]any{"name": hostile}}, "timestamp": 9}},
		{"type": "message", "id": "u2", "parentId": "sys", "timestamp": "2026-12-01T00:00:16.000Z", "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": hostile}}, "timestamp": 8}},
	}
	var b strings.Builder
	for _, ln := range lines {
		raw, err := json.Marshal(ln)
		if err != nil {
			t.Fatal(err)
		}
		// A session file need not escape < and >; the export must.
		s := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(raw))
		b.WriteString(s + "\n")
	}
	return []byte(b.String())
}
