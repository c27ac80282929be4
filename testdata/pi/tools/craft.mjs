// Writes the hand-crafted sessions of the pi interop corpus (old versions, edge cases, damaged files).
//   node craft.mjs OUTDIR
// Everything here is deterministic: fixed ids, fixed timestamps, no randomness.
import { writeFileSync, mkdirSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";

const out = process.argv[2];
if (!out) { console.error("usage: node craft.mjs OUTDIR"); process.exit(2); }
mkdirSync(out, { recursive: true });
const hintsFile = process.argv[3];
// leaf to use for the expected context-<LEAF>.json of each crafted file (the second leaf is always "null")
const hints = {};

// ---------------------------------------------------------------------------------------------
// helpers

let clock = 0;
const setClock = (iso) => { clock = Date.parse(iso); };
const tick = (ms = 1700) => { clock += ms; return clock; };
const iso = (t = clock) => new Date(t).toISOString();

let idSalt = "";
let idN = 0;
const newId = () => createHash("sha1").update(`${idSalt}/${idN++}`).digest("hex").slice(0, 8);
const resetIds = (salt) => { idSalt = salt; idN = 0; };

const round = (x) => Math.round(x * 1e9) / 1e9;
function usage(input, output, cacheRead = 0, cacheWrite = 0) {
  const c = { input: round(input * 3e-6), output: round(output * 15e-6), cacheRead: round(cacheRead * 3e-7), cacheWrite: round(cacheWrite * 3.75e-6) };
  return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite,
    cost: { ...c, total: round(c.input + c.output + c.cacheRead + c.cacheWrite) } };
}

let model = { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" };
const setModel = (api, provider, m) => { model = { api, provider, model: m }; };

const user = (content) => ({ role: "user", content, timestamp: tick(4000) });
let usageIn = 3200;
function assistant(content, stopReason = "stop", extra = {}) {
  usageIn += 900;
  return { role: "assistant", content, ...model, usage: usage(usageIn, 40 + content.length * 97, Math.max(0, usageIn - 1800)),
    stopReason, timestamp: tick(6000), ...extra };
}
const text = (t) => ({ type: "text", text: t });
const thinking = (t, sig) => (sig ? { type: "thinking", thinking: t, thinkingSignature: sig } : { type: "thinking", thinking: t });
let callN = 0;
const call = (name, args) => ({ type: "toolCall", id: `toolu_01${String(++callN).padStart(4, "0")}${idSalt.slice(0, 4).replace(/[^a-z]/g, "x")}`, name, arguments: args });
const result = (c, body, extra = {}) => ({ role: "toolResult", toolCallId: c.id, toolName: c.name,
  content: typeof body === "string" ? [text(body)] : body, isError: false, timestamp: tick(900), ...extra });
const bash = (command, output, extra = {}) => ({ role: "bashExecution", command, output, exitCode: 0, cancelled: false, truncated: false,
  timestamp: tick(2500), ...extra });

// v3 entry: type, id, parentId, timestamp first (pi's own order for most types)
function entry(type, parentId, fields, id = newId()) {
  tick(300);
  return { type, id, parentId, timestamp: iso(), ...fields };
}
const msgE = (parentId, message, id) => entry("message", parentId, { message }, id);
// v1 entry: no id, no parentId
function v1(type, fields) { tick(300); return { type, timestamp: iso(), ...fields }; }

function write(name, lines, { trailingNewline = true } = {}) {
  const body = lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + (trailingNewline ? "\n" : "");
  writeFileSync(join(out, `${name}.jsonl`), body);
}

// Realistic bulk: file contents and command outputs.
const LOGIN_TS = `import { Router } from "express";
import { verifyPassword } from "./hash";
import { sessions } from "../store/sessions";

export const login = Router();

login.post("/login", async (req, res) => {
  const { email, password } = req.body ?? {};
  if (!email || !password) {
    return res.status(400).json({ error: "email and password are required" });
  }
  const user = await req.app.locals.db.users.findByEmail(email);
  if (!user || !(await verifyPassword(password, user.passwordHash))) {
    return res.status(401).json({ error: "invalid credentials" });
  }
  const sid = await sessions.create(user.id, { ttlSeconds: 60 * 60 * 8 });
  res.cookie("sid", sid, { httpOnly: true, sameSite: "lax", secure: req.secure });
  return res.json({ ok: true, user: { id: user.id, email: user.email } });
});
`;
const TEST_FAIL = `> webapp@1.4.0 test
> vitest run test/auth/login.test.ts

 ❯ test/auth/login.test.ts (4 tests | 1 failed) 212ms
   × POST /login > rejects a missing body 18ms
     → expected 400 "Bad Request", got 500 "Internal Server Error"

 FAIL  test/auth/login.test.ts > POST /login > rejects a missing body
TypeError: Cannot destructure property 'email' of 'req.body' as it is undefined.
 ❯ src/auth/login.ts:8:11
      6|
      7| login.post("/login", async (req, res) => {
      8|   const { email, password } = req.body;
       |           ^
      9|   if (!email || !password) {

 Test Files  1 failed (1)
      Tests  1 failed | 3 passed (4)
`;
const GO_LIST = `package cmd

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/example/cli-tool/internal/store"
)

// List prints every task as a table.
func List(w io.Writer, s *store.Store) error {
	tasks, err := s.Tasks()
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\\tSTATUS\\tTITLE")
	for _, t := range tasks {
		fmt.Fprintf(tw, "%d\\t%s\\t%s\\n", t.ID, t.Status, t.Title) // TODO: truncate long titles
	}
	return tw.Flush() // TODO: --json
}
`;
const para = (n, seed) => {
  const words = ("the session loader streams entries and keeps a small index of ids so that branching and compaction stay cheap " +
    "while the tree view renders labels and summaries for every branch point of the conversation").split(" ");
  const w = [];
  for (let i = 0; i < n; i++) w.push(words[(i * 7 + seed * 13) % words.length]);
  return w.join(" ");
};

// ---------------------------------------------------------------------------------------------
// v1: no version, no ids; header carries provider/modelId/thinkingLevel; compaction uses firstKeptEntryIndex
function v1Basic() {
  setClock("2025-11-03T14:02:11.000Z");
  idSalt = "v1basic"; callN = 0; usageIn = 3000;
  setModel("anthropic-messages", "anthropic", "claude-sonnet-4-5");
  const L = [];
  L.push({ type: "session", id: "4f7d2c1e-9a3b-4c8d-b1e2-7f6a5d4c3b2a", timestamp: iso(), cwd: "/home/dev/webapp",
    provider: "anthropic", modelId: "claude-sonnet-4-5", thinkingLevel: "medium" });
  // index 1
  L.push(v1("message", { message: user("The login test started failing after I bumped express to 5. Can you take a look?") }));
  const c1 = call("bash", { command: "npx vitest run test/auth/login.test.ts" });
  L.push(v1("message", { message: assistant([thinking("Run the failing test first to see the actual error."), text("Let me run the failing test."), c1], "toolUse") }));
  L.push(v1("message", { message: result(c1, TEST_FAIL, { isError: true }) }));
  const c2 = call("read", { path: "src/auth/login.ts" });
  L.push(v1("message", { message: assistant([text("Express 5 no longer defaults `req.body` when no body parser matched. Let me read the handler."), c2], "toolUse") }));
  L.push(v1("message", { message: result(c2, LOGIN_TS) }));       // index 5
  const c3 = call("edit", { path: "src/auth/login.ts", oldText: "const { email, password } = req.body;", newText: "const { email, password } = req.body ?? {};" });
  L.push(v1("message", { message: assistant([c3], "toolUse") }));
  L.push(v1("message", { message: result(c3, "Successfully replaced text in src/auth/login.ts.", { details: { diff: "-  const { email, password } = req.body;\n+  const { email, password } = req.body ?? {};" } }) }));
  L.push(v1("message", { message: assistant([text("Fixed: `req.body` is `undefined` under Express 5 when the request has no JSON body, so the handler now falls back to `{}` and returns 400 as the test expects.")]) }));
  // index 9
  L.push(v1("message", { message: user("Great. Now run the full suite please.") }));
  L.push(v1("thinking_level_change", { thinkingLevel: "high" }));   // index 10
  L.push(v1("message", { message: bash("npm test", " Test Files  14 passed (14)\n      Tests  87 passed (87)\n   Duration  4.21s", {}) }));
  const c4 = call("bash", { command: "npm test -- --reporter=dot" });
  L.push(v1("message", { message: assistant([thinking("User already ran it; confirm with the dot reporter."), c4], "toolUse") }));
  L.push(v1("message", { message: result(c4, "·".repeat(87) + "\n\n Test Files  14 passed (14)\n      Tests  87 passed (87)") }));
  L.push(v1("message", { message: assistant([text("All 87 tests in 14 files pass.")]) }));   // index 14
  // index 15: compaction keeps from index 9 (the "run the full suite" user message)
  L.push(v1("compaction", { summary: "## Goal\nFix the failing login test after the Express 5 upgrade.\n\n## Progress\n### Done\n- [x] `src/auth/login.ts`: default `req.body` to `{}`\n\n## Next Steps\n1. Run the full suite", firstKeptEntryIndex: 9, tokensBefore: 48211 }));
  L.push(v1("model_change", { provider: "openai", modelId: "gpt-5" }));
  setModel("openai-responses", "openai", "gpt-5");
  L.push(v1("message", { message: user("Write a short changelog entry for this.") }));
  const c5 = call("write", { path: "CHANGELOG.md", content: "## 1.4.1\n\n- Fix 500 on `POST /login` without a body under Express 5.\n" });
  L.push(v1("message", { message: assistant([c5], "toolUse") }));
  L.push(v1("message", { message: result(c5, "Successfully wrote 74 bytes to CHANGELOG.md") }));
  L.push(v1("message", { message: assistant([text("Added a 1.4.1 entry to CHANGELOG.md.")]) }));
  write("v1-basic", L);
  hints["v1-basic"] = "ffffffff"; // ids are random after pi's v1 migration: use an unknown id (falls back to the last entry)
}

// v1 with branchedFrom, two compactions, the last one pointing at the header (index 0 => nothing kept),
// and an error + aborted assistant
function v1Branched() {
  setClock("2025-10-21T08:45:00.000Z");
  idSalt = "v1branch"; callN = 0; usageIn = 12000;
  setModel("anthropic-messages", "anthropic", "claude-opus-4");
  const L = [];
  L.push({ type: "session", id: "b3a1f0e2-5c4d-4e6f-8a9b-0c1d2e3f4a5b", timestamp: iso(), cwd: "/home/dev/webapp",
    provider: "anthropic", modelId: "claude-opus-4", thinkingLevel: "off",
    branchedFrom: "/home/dev/.pi/agent/sessions/--home-dev-webapp--/2025-10-20T17-12-44-101Z_0e6c7a1b-2d3e-4f50-8192-a3b4c5d6e7f8.jsonl" });
  L.push(v1("message", { message: user("Migrate the sessions table to store ttl in seconds instead of minutes.") }));     // 1
  const c1 = call("ls", { path: "migrations" });
  L.push(v1("message", { message: assistant([c1], "toolUse") }));                                                         // 2
  L.push(v1("message", { message: result(c1, "0001_init.sql\n0002_users_email_idx.sql\n0003_sessions.sql") }));          // 3
  const c2 = call("write", { path: "migrations/0004_sessions_ttl_seconds.sql", content: "ALTER TABLE sessions ADD COLUMN ttl_seconds INTEGER;\nUPDATE sessions SET ttl_seconds = ttl_minutes * 60;\nALTER TABLE sessions DROP COLUMN ttl_minutes;\n" });
  L.push(v1("message", { message: assistant([text("I'll add a new migration."), c2], "toolUse") }));                     // 4
  L.push(v1("message", { message: result(c2, "Successfully wrote 151 bytes to migrations/0004_sessions_ttl_seconds.sql") })); // 5
  L.push(v1("message", { message: assistant([], "error", { errorMessage: "529 overloaded_error: Overloaded" }) }));       // 6
  L.push(v1("message", { message: user("continue") }));                                                                   // 7
  L.push(v1("message", { message: assistant([text("The migration is written. Next I would update `sessions.create`.")]) })); // 8
  L.push(v1("compaction", { summary: "Wrote migration 0004 converting ttl minutes to seconds.", firstKeptEntryIndex: 7, tokensBefore: 30500 })); // 9
  L.push(v1("message", { message: user("Yes, update sessions.create and its callers.") }));                              // 10
  const c3 = call("bash", { command: "grep -rn 'ttlMinutes' src" });
  L.push(v1("message", { message: assistant([c3], "toolUse") }));                                                         // 11
  L.push(v1("message", { message: result(c3, "src/store/sessions.ts:12:  create(userId: string, opts: { ttlMinutes: number })\nsrc/auth/login.ts:16:  const sid = await sessions.create(user.id, { ttlMinutes: 480 });") })); // 12
  L.push(v1("message", { message: assistant([text("Two places use it. Editing both…")], "aborted") }));                 // 13
  L.push(v1("compaction", { summary: "Migration 0004 written; two callers of ttlMinutes found (sessions.ts, login.ts). The user aborted the edit.", firstKeptEntryIndex: 0, tokensBefore: 41870 })); // 14
  L.push(v1("message", { message: user("Sorry, go ahead with the edit now.") }));                                        // 15
  const c4 = call("edit", { path: "src/store/sessions.ts", oldText: "ttlMinutes: number", newText: "ttlSeconds: number" });
  L.push(v1("message", { message: assistant([c4], "toolUse") }));
  L.push(v1("message", { message: result(c4, "Successfully replaced text in src/store/sessions.ts.") }));
  L.push(v1("message", { message: assistant([text("Done: `sessions.create` now takes `ttlSeconds`.")]) }));
  write("v1-branched", L);
  hints["v1-branched"] = "ffffffff";
}

// v1 file with a blank line and a garbage line before the compaction's target: pi's firstKeptEntryIndex indexes the
// *parsed* entries (blank and bad lines dropped), not the physical lines.
function v1Garbage() {
  setClock("2025-09-30T10:00:00.000Z");
  idSalt = "v1garb"; callN = 0; usageIn = 2000;
  setModel("anthropic-messages", "anthropic", "claude-sonnet-4");
  const L = [];
  L.push({ type: "session", id: "9e8d7c6b-5a49-4382-9176-a5b4c3d2e1f0", timestamp: iso(), cwd: "/home/dev/notes",
    provider: "anthropic", modelId: "claude-sonnet-4", thinkingLevel: "low" });
  L.push(v1("message", { message: user("message A (parsed index 1, line 1)") }));
  L.push(v1("message", { message: assistant([text("reply A (parsed index 2, line 2)")]) }));
  L.push("");                                                   // line 3: blank
  L.push("{\"type\":\"message\",\"timestamp\":\"2025-09-30T10:00:09.000Z\",\"message\":{\"role\":\"user\",\"content\":\"cut off");   // line 4: garbage
  L.push(v1("message", { message: user("message B (parsed index 3, line 5)") }));
  L.push(v1("message", { message: assistant([text("reply B (parsed index 4, line 6)")]) }));
  L.push(v1("message", { message: user("message C (parsed index 5, line 7)") }));
  L.push(v1("message", { message: assistant([text("reply C (parsed index 6, line 8)")]) }));
  L.push(v1("compaction", { summary: "A and B discussed.", firstKeptEntryIndex: 5, tokensBefore: 900 }));
  L.push(v1("message", { message: user("message D after compaction") }));
  L.push(v1("message", { message: assistant([text("reply D")]) }));
  write("dmg-v1-garbage", L);
  hints["dmg-v1-garbage"] = "ffffffff";
}

// ---------------------------------------------------------------------------------------------
// v2: ids, version 2, hookMessage role, branches, branch_summary, compaction with firstKeptEntryId
function v2Basic() {
  setClock("2025-12-09T16:20:00.000Z");
  resetIds("v2basic"); callN = 0; usageIn = 5000;
  setModel("anthropic-messages", "anthropic", "claude-opus-4-1");
  const L = [];
  L.push({ type: "session", version: 2, id: "c0ffee00-1234-4abc-9def-0123456789ab", timestamp: iso(), cwd: "/home/dev/cli-tool" });
  const a1 = entry("model_change", null, { provider: "anthropic", modelId: "claude-opus-4-1" }); L.push(a1);
  const a2 = entry("thinking_level_change", a1.id, { thinkingLevel: "low" }); L.push(a2);
  const a3 = msgE(a2.id, user("Add a --json flag to `tasks list`.")); L.push(a3);
  const r1 = call("read", { path: "cmd/list.go" });
  const a4 = msgE(a3.id, assistant([thinking("Look at the list command first."), r1], "toolUse")); L.push(a4);
  const a5 = msgE(a4.id, result(r1, GO_LIST)); L.push(a5);
  const a6 = msgE(a5.id, { role: "hookMessage", customType: "todo-reminder", content: "Reminder: cmd/list.go has 2 open TODOs.", display: true, details: { count: 2 }, timestamp: tick(100) }); L.push(a6);
  const e1 = call("edit", { path: "cmd/list.go", oldText: "func List(w io.Writer, s *store.Store) error {", newText: "func List(w io.Writer, s *store.Store, asJSON bool) error {" });
  const a7 = msgE(a6.id, assistant([text("I'll add an `asJSON` parameter."), e1], "toolUse")); L.push(a7);
  const a8 = msgE(a7.id, result(e1, "Successfully replaced text in cmd/list.go.")); L.push(a8);
  const a9 = msgE(a8.id, assistant([text("Added the parameter; wiring the flag next.")])); L.push(a9);
  // user went back to a2 and summarized the abandoned branch
  const b1 = entry("branch_summary", a2.id, { fromId: a2.id, summary: "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\nAdd --json to `tasks list`.\n\n## Progress\n### Done\n- [x] Added an `asJSON` parameter to `List`\n\n<read-files>\ncmd/list.go\n</read-files>\n\n<modified-files>\ncmd/list.go\n</modified-files>", details: { readFiles: [], modifiedFiles: ["cmd/list.go"] } }); L.push(b1);
  const b2 = msgE(b1.id, user("Actually, add a --format flag instead that accepts json or table.")); L.push(b2);
  const r2 = call("bash", { command: "go test ./cmd/..." });
  const b3 = msgE(b2.id, assistant([text("Let me check the tests still pass before changing anything."), r2], "toolUse")); L.push(b3);
  const b4 = msgE(b3.id, result(r2, "ok  \tgithub.com/example/cli-tool/cmd\t0.412s")); L.push(b4);
  const b5 = msgE(b4.id, { role: "hookMessage", customType: "lint", content: [text("golangci-lint: 0 issues.")], display: false, timestamp: tick(100) }); L.push(b5);
  const e2 = call("edit", { path: "cmd/list.go", oldText: "func List(w io.Writer, s *store.Store) error {", newText: "func List(w io.Writer, s *store.Store, format string) error {" });
  const b6 = msgE(b5.id, assistant([e2], "toolUse")); L.push(b6);
  const b7 = msgE(b6.id, result(e2, "Successfully replaced text in cmd/list.go.")); L.push(b7);
  const b8 = msgE(b7.id, assistant([text("`List` now takes a `format` argument (`json` or `table`).")])); L.push(b8);
  const b9 = entry("compaction", b8.id, { summary: "## Goal\nAdd `--format json|table` to `tasks list`.\n\n## Progress\n### Done\n- [x] `List` takes a format argument", firstKeptEntryId: b2.id, tokensBefore: 22840, details: { readFiles: ["cmd/list.go"], modifiedFiles: ["cmd/list.go"] } }); L.push(b9);
  const b10 = msgE(b9.id, user("Now hook the flag up in main.go.")); L.push(b10);
  const b11 = msgE(b10.id, assistant([text("Done — `--format` is parsed in main.go and passed to `List`.")])); L.push(b11);
  write("v2-basic", L);
  hints["v2-basic"] = a7.id;
}

// v2 where the hookMessage sits on the current path right before the leaf, plus a custom entry and a label
function v2Hook() {
  setClock("2025-12-20T09:00:00.000Z");
  resetIds("v2hook"); callN = 0; usageIn = 1500;
  setModel("openai-responses", "openai", "gpt-5");
  const L = [];
  L.push({ type: "session", version: 2, id: "d15ea5e0-aaaa-4bbb-8ccc-dddddddddddd", timestamp: iso(), cwd: "/home/dev/cli-tool" });
  const a1 = msgE(null, user("What does the `--since` flag do?")); L.push(a1);
  const a2 = msgE(a1.id, assistant([text("It filters tasks created after the given date (RFC 3339 or `7d`-style durations).")])); L.push(a2);
  const a3 = entry("custom", a2.id, { customType: "git-status", data: { branch: "feat/format", dirty: true } }); L.push(a3);
  const a4 = msgE(a3.id, { role: "hookMessage", customType: "git-status", content: "Working tree is dirty on feat/format.", display: true, timestamp: tick(100) }); L.push(a4);
  write("v2-hook", L);
  hints["v2-hook"] = a2.id;
}

// ---------------------------------------------------------------------------------------------
// v3 edge cases that pi writes but the random generator rarely combines
function v3Edges() {
  setClock("2026-02-02T11:00:00.000Z");
  resetIds("v3edges"); callN = 0; usageIn = 4000;
  setModel("anthropic-messages", "anthropic", "claude-sonnet-4-5");
  const L = [];
  L.push({ type: "session", version: 3, id: "0194c1a2-7b3c-7d4e-8f50-617283940a1b", timestamp: iso(), cwd: "/home/dev/edge cases/ünïcödé",
    parentSession: "/home/dev/.pi/agent/sessions/--home-dev-edge cases-ünïcödé--/2026-02-01T10-00-00-000Z_0194bc00-0000-7000-8000-000000000000.jsonl" });
  const e1 = entry("model_change", null, { provider: "anthropic", modelId: "claude-sonnet-4-5" }); L.push(e1);
  const e2 = entry("thinking_level_change", e1.id, { thinkingLevel: "minimal" }); L.push(e2);
  const e3 = entry("session_info", e2.id, { name: "edge cases" }); L.push(e3);
  const e4 = msgE(e3.id, user([text("Look at this screenshot — line 1\u2028line 2\u2029para; \"quotes\" \\ tab\t </script> 🚀"), { type: "image", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", mimeType: "image/png" }])); L.push(e4);
  const c1 = call("read", { path: "screenshot-notes.md" });
  const e5 = msgE(e4.id, assistant([thinking("The user attached an image; read the notes too.", "EqQBCkYIBRgCKkD5c2lnbmF0dXJl"), { type: "thinking", thinking: "", redacted: true, thinkingSignature: "cmVkYWN0ZWQ=" }, text("Reading the notes."), c1], "toolUse")); L.push(e5);
  const e6 = msgE(e5.id, result(c1, [text("# Notes\n" + para(120, 1)), { type: "image", data: "R0lGODlhAQABAAAAACw=", mimeType: "image/gif" }], { details: { lines: 2, truncated: false } })); L.push(e6);
  const e7 = msgE(e6.id, assistant([text("The screenshot shows the tree view. " + para(200, 2))])); L.push(e7);
  const e8 = entry("label", e7.id, { targetId: e4.id, label: "screenshot" }); L.push(e8);
  const e9 = msgE(e8.id, bash("ls -la", "", {})); L.push(e9);                                                        // empty output
  const e10 = msgE(e9.id, bash("make build", "go build ./...\n# arbor/session\n./load.go:42:2: undefined: foo", { exitCode: 2 })); L.push(e10);
  const e11 = msgE(e10.id, bash("sleep 100", "", { exitCode: null, cancelled: true })); L.push(e11);
  const e12 = msgE(e11.id, bash("go test ./... -v", para(300, 3), { truncated: true, fullOutputPath: "/tmp/pi-bash-0194c1a2.log" })); L.push(e12);
  const e13 = msgE(e12.id, bash("cat ~/.netrc", "machine example login me", { excludeFromContext: true })); L.push(e13);
  const e14 = entry("custom_message", e13.id, { customType: "ext.note", content: "plain string custom message", display: true }); L.push(e14);
  const e15 = entry("custom_message", e14.id, { customType: "ext.note", content: [text("block custom message")], display: false, details: { source: "hook", n: 3 } }); L.push(e15);
  const e16 = entry("custom", e15.id, { customType: "ext.state", data: { cursor: 7, open: ["a.go", "b.go"] } }); L.push(e16);
  const e17 = entry("custom", e16.id, { customType: "ext.nodata" }); L.push(e17);
  const e18 = entry("model_change", e17.id, { provider: "openai", modelId: "gpt-5-codex" }); L.push(e18);
  const e19 = msgE(e18.id, user("And the error?")); L.push(e19);
  setModel("openai-responses", "openai", "gpt-5-codex");
  const e20 = msgE(e19.id, assistant([text("partial answer")], "length")); L.push(e20);
  const e21 = msgE(e20.id, assistant([], "error", { errorMessage: "terminated: socket hang up" })); L.push(e21);
  // branch back to e7 with an EMPTY summary (not emitted into context)
  const b1 = entry("branch_summary", e7.id, { fromId: e7.id, summary: "" }); L.push(b1);
  const b2 = msgE(b1.id, user("Forget the bash stuff. Summarize the notes in one line.")); L.push(b2);
  setModel("anthropic-messages", "anthropic", "claude-sonnet-4-5");
  const b3 = msgE(b2.id, assistant([text("The notes describe the tree view.")])); L.push(b3);
  // compaction whose firstKeptEntryId is on another branch (=> nothing before the compaction is kept)
  const b4 = entry("compaction", b3.id, { summary: "Notes summarized; bash experiments abandoned.", firstKeptEntryId: e12.id, tokensBefore: 9100, details: { readFiles: ["screenshot-notes.md"], modifiedFiles: [] } }); L.push(b4);
  const b5 = entry("label", b4.id, { targetId: e4.id }); L.push(b5);                         // clears the label (no label field)
  const b6 = entry("label", b5.id, { targetId: b3.id, label: "short answer" }); L.push(b6);
  const b7 = entry("session_info", b6.id, { name: "" }); L.push(b7);                         // clears the name
  const b8 = entry("thinking_level_change", b7.id, { thinkingLevel: "xhigh" }); L.push(b8);
  const b9 = msgE(b8.id, user("Thanks!")); L.push(b9);
  const b10 = msgE(b9.id, assistant([text("You're welcome.")])); L.push(b10);
  write("v3-edges", L);
  hints["v3-edges"] = e15.id;
}

// v3 tree shapes: several roots, branch_summary from "root", children whose timestamps are out of file order and ties,
// labels on several nodes, compaction keeping from firstKeptEntryId on the path, custom_message as last entry.
function v3Tree() {
  setClock("2026-01-15T20:00:00.000Z");
  resetIds("v3tree"); callN = 0; usageIn = 800;
  setModel("anthropic-messages", "anthropic", "claude-haiku-4-5");
  const L = [];
  const H = { type: "session", version: 3, id: "0194a0b0-c0d0-7e0f-8a1b-2c3d4e5f6a7b", timestamp: iso(), cwd: "/home/dev/tree",
    parentSession: "/home/dev/.pi/agent/sessions/--home-dev-tree--/2026-01-15T19-00-00-000Z_0194a000-0000-7000-8000-00000000aaaa.jsonl" };
  L.push(H);
  const r1 = msgE(null, user("root one: start")); L.push(r1);
  const r1a = msgE(r1.id, assistant([text("answer 1")])); L.push(r1a);
  // three children of r1a written in file order x,y,z with timestamps z < x == y (sort puts z first, keeps x before y)
  const base = clock;
  const x = { ...msgE(r1a.id, user("child x")), timestamp: iso(base + 5000) }; L.push(x);
  const y = { ...msgE(r1a.id, user("child y")), timestamp: iso(base + 5000) }; L.push(y);
  const z = { ...msgE(r1a.id, user("child z (earliest)")), timestamp: iso(base + 1000) }; L.push(z);
  clock = base + 6000;
  const xa = msgE(x.id, assistant([text("reply to x")])); L.push(xa);
  const ya = msgE(y.id, assistant([text("reply to y")])); L.push(ya);
  const lx = entry("label", ya.id, { targetId: x.id, label: "first try" }); L.push(lx);
  const ly = entry("label", lx.id, { targetId: y.id, label: "second try" }); L.push(ly);
  const ly2 = entry("label", ly.id, { targetId: y.id, label: "second try (renamed)" }); L.push(ly2);
  const sn = entry("session_info", ly2.id, { name: "  tree shapes  " }); L.push(sn);     // pi trims on write; this one is untrimmed as read
  // second root (resetLeaf)
  const r2 = msgE(null, user("root two: unrelated question")); L.push(r2);
  const r2a = msgE(r2.id, assistant([text("unrelated answer")])); L.push(r2a);
  // third root: branch_summary from "root"
  const r3 = entry("branch_summary", null, { fromId: "root", summary: "Explored two roots; nothing kept." }); L.push(r3);
  const r3a = msgE(r3.id, user("root three after summary")); L.push(r3a);
  const c1 = call("read", { path: "notes.txt" });
  const r3b = msgE(r3a.id, assistant([c1], "toolUse")); L.push(r3b);
  const r3c = msgE(r3b.id, result(c1, para(400, 5))); L.push(r3c);
  const r3d = msgE(r3c.id, assistant([text(para(150, 6))])); L.push(r3d);
  const r3e = msgE(r3d.id, user("next")); L.push(r3e);
  const r3f = msgE(r3e.id, assistant([text("ok")])); L.push(r3f);
  const comp = entry("compaction", r3f.id, { summary: "Read notes.txt.", firstKeptEntryId: r3d.id, tokensBefore: 1234 }); L.push(comp);
  const after = msgE(comp.id, user("after compaction")); L.push(after);
  const after2 = msgE(after.id, assistant([text("still here")])); L.push(after2);
  const cm = entry("custom_message", after2.id, { customType: "ext.reminder", content: "custom message as the last entry", display: true }); L.push(cm);
  write("v3-tree", L);
  hints["v3-tree"] = ya.id;
}

// ---------------------------------------------------------------------------------------------
// Damaged files: all derived from one small valid v3 session.
function baseSession(salt, cwd = "/home/dev/damaged") {
  setClock("2026-03-01T12:00:00.000Z");
  resetIds(salt); callN = 0; usageIn = 1000;
  setModel("anthropic-messages", "anthropic", "claude-sonnet-4-5");
  const H = { type: "session", version: 3, id: `0195${createHash("sha1").update(salt).digest("hex").slice(0, 4)}-0000-7000-8000-000000000001`, timestamp: iso(), cwd };
  const E = [];
  const m1 = entry("model_change", null, { provider: "anthropic", modelId: "claude-sonnet-4-5" }); E.push(m1);
  const m2 = entry("thinking_level_change", m1.id, { thinkingLevel: "medium" }); E.push(m2);
  const u1 = msgE(m2.id, user("Why does `go vet` complain about copying a sync.Mutex in store.go?")); E.push(u1);
  const c1 = call("read", { path: "internal/store/store.go" });
  const a1 = msgE(u1.id, assistant([thinking("Read the file."), c1], "toolUse")); E.push(a1);
  const t1 = msgE(a1.id, result(c1, "package store\n\nimport \"sync\"\n\ntype Store struct {\n\tmu sync.Mutex\n\tdata map[string]string\n}\n\nfunc (s Store) Get(k string) string {\n\ts.mu.Lock()\n\tdefer s.mu.Unlock()\n\treturn s.data[k]\n}\n")); E.push(t1);
  const a2 = msgE(t1.id, assistant([text("`Get` has a value receiver, so every call copies `Store` including its mutex. Use a pointer receiver: `func (s *Store) Get`.")])); E.push(a2);
  const u2 = msgE(a2.id, user("Fix it.")); E.push(u2);
  const c2 = call("edit", { path: "internal/store/store.go", oldText: "func (s Store) Get", newText: "func (s *Store) Get" });
  const a3 = msgE(u2.id, assistant([c2], "toolUse")); E.push(a3);
  const t2 = msgE(a3.id, result(c2, "Successfully replaced text in internal/store/store.go.")); E.push(t2);
  const a4 = msgE(t2.id, assistant([text("Changed `Get` to a pointer receiver; `go vet` is clean now.")])); E.push(a4);
  return { H, E, ids: { m1, m2, u1, a1, t1, a2, u2, a3, t2, a4 } };
}

function damaged() {
  // a garbage line (and a blank line) in the middle
  {
    const { H, E } = baseSession("garbage-middle");
    write("dmg-garbage-middle", [H, ...E.slice(0, 5), "this line is not JSON {{{", "", ...E.slice(5)]);
  }
  // the first line is garbage, the header comes second (pi takes the first *parsable* line as the header)
  {
    const { H, E } = baseSession("garbage-first");
    write("dmg-garbage-first", ["\u001b[2K~~~ junk left by a crashed editor ~~~", H, ...E]);
  }
  // torn last line: cut mid-JSON, no trailing newline
  {
    const { H, E } = baseSession("torn-tail");
    const extra = JSON.stringify(msgE(E[E.length - 1].id, user("One more thing: can you also add a test for Get?")));
    write("dmg-torn-tail", [H, ...E, extra.slice(0, Math.floor(extra.length * 0.6))], { trailingNewline: false });
  }
  // last line complete and valid but no trailing newline
  {
    const { H, E } = baseSession("no-final-newline");
    write("dmg-no-final-newline", [H, ...E], { trailingNewline: false });
  }
  // first line is not a header, but every line is a valid entry
  {
    const { E } = baseSession("no-header");
    write("dmg-no-header", E);
  }
  // nothing parses
  writeFileSync(join(out, "dmg-nothing-parses.jsonl"), "garbage\n{not json\n\"unterminated\n{\"type\":\"session\",\"id\":\n");
  // empty file; only blank lines
  writeFileSync(join(out, "dmg-empty.jsonl"), "");
  writeFileSync(join(out, "dmg-blank-lines.jsonl"), "\n\n   \n\t\n\n");
  // header only
  {
    const { H } = baseSession("header-only");
    write("dmg-header-only", [H]);
  }
  // duplicate ids: a later entry reuses the id of the first user message, on a side branch under the same parent.
  // pi (last one wins) then resolves every reference to that id, including the original's children, to the duplicate.
  {
    const { H, E, ids } = baseSession("dup-ids");
    const dupUser = { ...msgE(ids.m2.id, user("I am a later entry that reuses the id of the first user message.")), id: ids.u1.id };
    const reply = msgE(ids.u1.id, assistant([text("reply whose parentId is the duplicated id")]));
    write("dmg-dup-ids", [H, ...E, dupUser, reply]);
    hints["dmg-dup-ids"] = ids.a2.id;
  }
  // parent cycle: a->b, b->a, plus a self-parented entry; the leaf (last entry) is on the normal chain
  {
    const { H, E, ids } = baseSession("cycle");
    const a = { ...entry("message", "ccccbbbb", { message: user("cycle member a (parent b)") }), id: "ccccaaaa" };
    const b = { ...entry("message", "ccccaaaa", { message: assistant([text("cycle member b (parent a)")]) }), id: "ccccbbbb" };
    const c = { ...entry("message", "cccccccc", { message: user("self-parented entry") }), id: "cccccccc" };
    const d = msgE("ccccaaaa", assistant([text("child of cycle member a")]));
    const last = msgE(ids.a4.id, user("normal entry after the cycle, child of the last good assistant"));
    const lastA = msgE(last.id, assistant([text("normal reply; this is the leaf")]));
    write("dmg-cycle", [H, ...E, a, b, c, d, last, lastA]);
    hints["dmg-cycle"] = ids.a2.id;
  }
  // parent cycle ON the leaf's path: the last entry's ancestors loop
  {
    const { H, E } = baseSession("cycle-leaf");
    const a = { ...entry("message", "ddddbbbb", { message: user("cycle member a (parent b)") }), id: "ddddaaaa" };
    const b = { ...entry("message", "ddddaaaa", { message: assistant([text("cycle member b (parent a)")]) }), id: "ddddbbbb" };
    const leaf = msgE("ddddaaaa", user("leaf whose ancestors loop"));
    write("dmg-cycle-leaf", [H, ...E, a, b, leaf]);
    hints["dmg-cycle-leaf"] = E[5].id;
  }
  // self-parented leaf: the last entry is its own parent
  {
    const { H, E } = baseSession("self-parent-leaf");
    const s = { ...entry("message", "eeeeeeee", { message: user("I am my own parent and the last entry") }), id: "eeeeeeee" };
    write("dmg-self-parent-leaf", [H, ...E, s]);
    hints["dmg-self-parent-leaf"] = E[5].id;
  }
  // orphan: an entry whose parent id does not exist, with children; the leaf descends from it
  {
    const { H, E, ids } = baseSession("orphan");
    const o = msgE("0badf00d", user("orphan: my parent 0badf00d was never written"));
    const oa = msgE(o.id, assistant([text("reply under the orphan")]));
    const mid = msgE(ids.a2.id, user("a normal sibling branch under the first explanation"));
    const ou = msgE(oa.id, user("leaf under the orphan"));
    write("dmg-orphan", [H, ...E.slice(0, 7), o, ...E.slice(7), oa, mid, ou]);
    hints["dmg-orphan"] = oa.id;
  }
  // unknown entry type, unknown fields everywhere, unknown message role, v2 role in a v3 file, unknown block type
  {
    const { H, E, ids } = baseSession("unknown");
    const H2 = { ...H, futureHeaderField: { a: [1, 2, 3] }, gitBranch: "main" };
    const E2 = E.map((e) => (e.id === ids.u1.id ? { ...e, zExtra: "unknown top-level field", message: { ...e.message, lang: "en" } } : e));
    const k1 = entry("bookmark", ids.a4.id, { targetId: ids.u1.id, note: "unknown entry type on the path" });
    const k2 = msgE(k1.id, { role: "system_note", content: "a message role pi does not know", timestamp: tick(10) });
    const k3 = msgE(k2.id, { role: "hookMessage", customType: "legacy", content: "v2 role in a v3 file (not migrated)", display: true, timestamp: tick(10) });
    const k4 = msgE(k3.id, user([text("block list with an unknown block type"), { type: "audio", data: "AAAA", mimeType: "audio/wav" }]));
    const k5 = msgE(k4.id, assistant([text("ok"), { type: "citation", url: "https://example.invalid/doc", title: "doc" }], "stop", { responseId: "resp_123", extraUsage: { reasoning: 12 } }));
    const k6 = entry("custom_message", k5.id, { customType: "ext.x", content: "custom message with an extra field", display: true, extraField: 1 });
    const k7 = entry("compaction", k6.id, { summary: "compaction with unknown fields", firstKeptEntryId: k2.id, tokensBefore: 500, details: { readFiles: ["a.go"], modifiedFiles: [], extra: true }, fromHook: false, compactionVersion: 9 });
    const k8 = entry("telemetry", k7.id, { payload: { ms: 12 } });
    const k9 = msgE(k8.id, user("after an unknown entry type"));
    write("dmg-unknown", [H2, ...E2, k1, k2, k3, k4, k5, k6, k7, k8, k9]);
    hints["dmg-unknown"] = k1.id;
  }
  // a version 4 header (newer than pi knows)
  {
    const { H, E } = baseSession("v4");
    write("dmg-v4", [{ ...H, version: 4, storage: "chunked" }, ...E]);
  }
  // an entry whose timestamp is missing and a custom_message with an invalid timestamp
  {
    const { H, E, ids } = baseSession("bad-timestamps");
    const cmsg = { ...entry("custom_message", ids.a4.id, { customType: "ext.t", content: "bad entry timestamp", display: true }), timestamp: "not a date" };
    const nots = msgE(cmsg.id, user("entry without a timestamp field"));
    delete nots.timestamp;
    const bs = { ...entry("branch_summary", nots.id, { fromId: nots.id, summary: "summary with missing timestamp" }) };
    delete bs.timestamp;
    write("dmg-bad-timestamps", [H, ...E, cmsg, nots, bs]);
  }
}

v1Basic();
v1Branched();
v1Garbage();
v2Basic();
v2Hook();
v3Edges();
v3Tree();
damaged();
if (hintsFile) writeFileSync(hintsFile, JSON.stringify(hints, null, 1) + "\n");
console.log("ok");
