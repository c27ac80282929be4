// Writes one session with pi 1.6.0's own code, every kind of entry arbor's
// typed appends write, in the order of TestTypedAppendsMatchPi:
//   node pishapes.mjs PEERDIR SESSIONDIR
// The messages come from pi's agent loop (a user prompt, a faux model's
// replies with thinking, text and tool calls, the loop's tool results) and
// from AgentSession.recordBashResult; the entries from SessionManager.
// It prints the session file's path.
const [peer, sessionDir] = process.argv.slice(2);
const nm = `${peer}/node_modules/@earendil-works`;
const { SessionManager } = await import(`${nm}/pi-coding-agent/dist/core/session-manager.js`);
import { readFileSync } from "node:fs";
const { convertToLlm } = await import(`${nm}/pi-coding-agent/dist/core/messages.js`);
const { runAgentLoop } = await import(`${nm}/pi-agent-core/dist/agent-loop.js`);
const faux = await import(`${nm}/pi-ai/dist/providers/faux.js`);

const sm = SessionManager.create("/tmp/project", sessionDir);
sm.appendModelChange("faux", "faux-1");
sm.appendThinkingLevelChange("high");

const core = faux.createFauxCore({ provider: "faux", models: [{ id: "faux-1", reasoning: true }] });
core.setResponses([
  faux.fauxAssistantMessage([
    { type: "thinking", thinking: "look first", thinkingSignature: "sig" },
    faux.fauxText("Reading it."),
    faux.fauxToolCall("read", { path: "a.png" }, { id: "call_1" }),
    faux.fauxToolCall("fail", {}, { id: "call_2" }),
  ], { stopReason: "toolUse" }),
  faux.fauxAssistantMessage("Done."),
]);
const tools = [
  { name: "read", label: "read", description: "read a file", parameters: { type: "object", properties: { path: { type: "string" } } },
    execute: async () => ({ content: [{ type: "text", text: "an image" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }], details: { lines: 1 } }) },
  { name: "fail", label: "fail", description: "always fails", parameters: { type: "object", properties: {} },
    execute: async () => { throw new Error("no such thing"); } },
];
const prompt = { role: "user", content: [{ type: "text", text: "look at a.png" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }], timestamp: Date.now() };
const config = { model: core.getModel(), reasoning: "high", convertToLlm, toolExecution: "sequential" };
const messages = await runAgentLoop([prompt], { systemPrompt: "", messages: [], tools }, config, async () => {}, undefined, core.streamSimple);
// The loop opens with a system message declaring the tools: arbor writes those
// through its own system-prompt code, not a typed append, so it is left out.
for (const m of messages) if (m.role !== "system") sm.appendMessage(m);

// agent-session.js does not load under Node 20 (its HTTP client needs zstd), so
// its recordBashResult method is taken from the source and run as it is.
const src = readFileSync(`${nm}/pi-coding-agent/dist/core/agent-session.js`, "utf8");
const start = src.indexOf("    recordBashResult(command, result, options) {");
const end = src.indexOf("\n    }\n", start) + 7;
if (start < 0 || end < start) throw new Error("recordBashResult not found in agent-session.js");
const session = { isStreaming: false, sessionManager: sm, _refreshFinalizedContext() {} };
const recordBashResult = new Function(`return ({ ${src.slice(start, end)} }).recordBashResult;`)();
recordBashResult.call(session, "ls", { output: "a.png\n", exitCode: 0, cancelled: false, truncated: false });
recordBashResult.call(session, "yes", { output: "y\ny\n", exitCode: undefined, cancelled: true, truncated: true, fullOutputPath: "/tmp/out.txt" }, { excludeFromContext: true });

sm.appendCustomEntry("todo", { items: ["a"] });
sm.appendCustomMessageEntry("note", "remember a.png", true, { source: "test" });
sm.appendCustomMessageEntry("note", [{ type: "text", text: "and b" }], false);
console.log(sm.getSessionFile());
