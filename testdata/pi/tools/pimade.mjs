// Damaged sessions produced by pi 0.73.1 itself (its known write bugs), from files made by craft.mjs.
//   node pimade.mjs PEERDIR SESSIONSDIR
// Writes SESSIONSDIR/dmg-reflush-dup.jsonl and SESSIONSDIR/dmg-torn-appended.jsonl.
import { writeFileSync, copyFileSync } from "node:fs";
import { join } from "node:path";

const [peer, dir] = process.argv.slice(2);
const { SessionManager } = await import(join(peer, "node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js"));

const usage = { input: 1200, output: 40, cacheRead: 0, cacheWrite: 0, totalTokens: 1240,
  cost: { input: 0.0036, output: 0.0006, cacheRead: 0, cacheWrite: 0, total: 0.0042 } };
let t = Date.parse("2026-03-02T09:00:00.000Z");
const user = (text) => ({ role: "user", content: text, timestamp: (t += 5000) });
const assistant = (text) => ({ role: "assistant", content: [{ type: "text", text }], api: "anthropic-messages", provider: "anthropic",
  model: "claude-sonnet-4-5", usage, stopReason: "stop", timestamp: (t += 5000) });

// 1. An empty file opened by pi: pi rewrites it as a lone header (flushed), the first append has no assistant yet so pi
//    marks it unflushed, and the assistant append then writes header + every entry again: two identical header lines.
{
  const f = join(dir, "dmg-reflush-dup.jsonl");
  writeFileSync(f, "");
  const sm = SessionManager.open(f, dir, "/home/dev/reflush");
  sm.appendMessage(user("First question after pi recovered an empty file."));
  sm.appendMessage(assistant("First answer; pi now writes the header a second time."));
  sm.appendMessage(user("Second question."));
  sm.appendMessage(assistant("Second answer."));
}

// 2. A torn last line (no trailing newline) and pi appends: the first new entry is glued onto the fragment and lost,
//    so the next entry's parent is unknown.
{
  const f = join(dir, "dmg-torn-appended.jsonl");
  copyFileSync(join(dir, "dmg-torn-tail.jsonl"), f);
  const sm = SessionManager.open(f, dir);
  sm.appendMessage(user("This entry is glued onto the torn fragment and lost."));
  sm.appendMessage(assistant("This reply survives but its parent is gone."));
}
console.log("ok");
