// Writes the pi-made sessions and pi's expected plans under compaction/testdata/pi/.
//
//   node make.mjs PI_DIR OUT_DIR
//
// PI_DIR is the pi peer's folder (../shared/peers/pi/setup.sh prints it). Sessions:
//   gen-*.jsonl    pi.mjs gen (random operations, random compactions and branches)
//   chain-*.jsonl  long linear work compacted by pi's own prepareCompaction
//                  (offline summaries), then continued and compacted again
// Expected: expected/<name>.prepare-<KEEP>.json = pi's prepareCompaction of the
// last entry's branch, reduced as pi.mjs prepare reduces it.
import { execFileSync } from "node:child_process";
import { readdirSync, renameSync, rmSync, mkdirSync, writeFileSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";

const [piDir, out] = process.argv.slice(2);
const { SessionManager } = await import(join(piDir, "node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js"));
const { prepareCompaction, DEFAULT_COMPACTION_SETTINGS } = await import(join(piDir, "node_modules/@mariozechner/pi-coding-agent/dist/core/compaction/compaction.js"));
const { computeFileLists, formatFileOperations } = await import(join(piDir, "node_modules/@mariozechner/pi-coding-agent/dist/core/compaction/utils.js"));

mkdirSync(join(out, "expected"), { recursive: true });
mkdirSync(join(out, "sessions"), { recursive: true });
const KEEPS = [20000, 4000, 1000, 200, 0];

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const WORDS = "session loader tree index cursor leaf branch parser.go main.go test failing panic nil context deadline ünïcödé 漢字 🚀 \" \\ \n tab\t refactor".split(" ");

function chain(seed, turns, every, keep) {
  const r = rng(seed);
  const int = (lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
  const pick = (a) => a[Math.floor(r() * a.length)];
  const text = (lo, hi) => Array.from({ length: int(lo, hi) }, () => pick(WORDS)).join(" ");
  let t = Date.UTC(2026, 6, 1) + seed * 1000;
  const ts = () => (t += int(1, 30000));
  const d = mkdtempSync(join(tmpdir(), "chain-"));
  const sm = SessionManager.create("/home/dev/chain", d);
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  sm.appendThinkingLevelChange("medium");
  let call = 0;
  for (let turn = 1; turn <= turns; turn++) {
    sm.appendMessage({ role: "user", content: r() < 0.5 ? text(3, 60) : [{ type: "text", text: text(3, 40) }], timestamp: ts() });
    const steps = int(0, 4);
    for (let s = 0; s < steps; s++) {
      const calls = Array.from({ length: int(1, 2) }, () => ({ type: "toolCall", id: `c${++call}`, name: pick(["read", "edit", "write", "bash", "ls"]),
        arguments: { path: pick(["src/a.go", "src/b.go", "README.md", "docs/x.md"]), n: int(0, 9) } }));
      const content = [];
      if (r() < 0.3) content.push({ type: "thinking", thinking: text(5, 80) });
      if (r() < 0.5) content.push({ type: "text", text: text(2, 40) });
      sm.appendMessage({ role: "assistant", content: [...content, ...calls], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5",
        usage: { input: 1000 * turn, output: 50, cacheRead: 0, cacheWrite: 0, totalTokens: 1000 * turn + 50, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "toolUse", timestamp: ts() });
      for (const c of calls) sm.appendMessage({ role: "toolResult", toolCallId: c.id, toolName: c.name, content: [{ type: "text", text: text(10, 400) }], isError: r() < 0.1, timestamp: ts() });
      if (r() < 0.1) sm.appendLabelChange(sm.getLeafId(), "mark " + turn);
      if (r() < 0.05) sm.appendThinkingLevelChange(pick(["low", "high"]));
    }
    if (r() < 0.1) sm.appendMessage({ role: "bashExecution", command: "go test ./...", output: text(0, 30), exitCode: int(0, 1), cancelled: false, truncated: false, timestamp: ts() });
    if (r() < 0.05) sm.appendCustomMessageEntry("ext.note", text(2, 10), true);
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: text(5, 100) }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5",
      usage: { input: 1000 * turn, output: 80, cacheRead: 0, cacheWrite: 0, totalTokens: 1000 * turn + 80, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: r() < 0.05 ? "aborted" : "stop", timestamp: ts() });
    if (turn % every === 0) {
      const p = prepareCompaction(sm.getBranch(), { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: keep });
      if (p) {
        const { readFiles, modifiedFiles } = computeFileLists(p.fileOps);
        sm.appendCompaction(`summary of ${p.messagesToSummarize.length} messages at turn ${turn}` + formatFileOperations(readFiles, modifiedFiles),
          p.firstKeptEntryId, p.tokensBefore, { readFiles, modifiedFiles });
      }
    }
  }
  return sm.getSessionFile();
}

// A session where pi's own plan keeps a tool result without its call: an
// extension's compaction kept from the tool result (pi #1764, #4570), and
// nothing after it may start a context, so pi's cut falls back to that result.
function orphan() {
  const d = mkdtempSync(join(tmpdir(), "orphan-"));
  const sm = SessionManager.create("/home/dev/orphan", d);
  let t = Date.UTC(2026, 6, 2);
  const usage = { input: 900, output: 40, cacheRead: 0, cacheWrite: 0, totalTokens: 940, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  sm.appendMessage({ role: "user", content: "read both files", timestamp: (t += 1000) });
  const calls = [{ type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "a.go" } }, { type: "toolCall", id: "toolu_2", name: "read", arguments: { path: "b.go" } }];
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "Reading." }, ...calls], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason: "toolUse", timestamp: (t += 1000) });
  sm.appendMessage({ role: "toolResult", toolCallId: "toolu_1", toolName: "read", content: [{ type: "text", text: "package a" }], isError: false, timestamp: (t += 1000) });
  const r2 = sm.appendMessage({ role: "toolResult", toolCallId: "toolu_2", toolName: "read", content: [{ type: "text", text: "package b" }], isError: false, timestamp: (t += 1000) });
  sm.appendCompaction("an extension's summary", r2, 940, { note: "not file lists" }, true);
  sm.appendThinkingLevelChange("high");
  return sm.getSessionFile();
}

function expect(file, name) {
  const sm = SessionManager.open(file, join(file, ".."));
  for (const keep of KEEPS) {
    const p = prepareCompaction(sm.getBranch(), { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: keep });
    let v = null;
    if (p) {
      const files = computeFileLists(p.fileOps);
      v = { firstKeptEntryId: p.firstKeptEntryId, isSplitTurn: p.isSplitTurn, tokensBefore: p.tokensBefore,
        messagesToSummarize: p.messagesToSummarize.length, turnPrefixMessages: p.turnPrefixMessages.length,
        previousSummary: p.previousSummary ?? null, readFiles: files.readFiles, modifiedFiles: files.modifiedFiles };
    }
    writeFileSync(join(out, "expected", `${name}.prepare-${keep}.json`), JSON.stringify(v) + "\n");
  }
}

// Random sessions written by pi (pi.mjs gen).
const g = mkdtempSync(join(tmpdir(), "gen-"));
execFileSync("node", [join(piDir, "pi.mjs"), "gen", g, "23", "10"]);
for (const f of readdirSync(g).filter((f) => f.endsWith(".jsonl"))) {
  const name = "gen-" + f.replace(".jsonl", "");
  renameSync(join(g, f), join(out, "sessions", name + ".jsonl"));
}
rmSync(g, { recursive: true });

const chains = [[1, 40, 12, 4000], [2, 60, 15, 1000], [3, 30, 7, 20000], [4, 85, 20, 2000], [5, 27, 5, 300], [6, 55, 50, 500]];
for (const [seed, turns, every, keep] of chains) {
  const file = chain(seed, turns, every, keep);
  renameSync(file, join(out, "sessions", `chain-${seed}.jsonl`));
}
renameSync(orphan(), join(out, "sessions", "orphan-1.jsonl"));
for (const f of readdirSync(join(out, "sessions")).filter((f) => f.endsWith(".jsonl"))) expect(join(out, "sessions", f), f.replace(".jsonl", ""));
