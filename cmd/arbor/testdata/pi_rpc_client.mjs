// Drives `arbor --mode rpc` with pi 1.6.0's own RpcClient (from the peer's
// node_modules): argv[2] is the peer folder, argv[3] a shim that runs arbor.
// Prints one JSON object with what each call returned. The page is exported
// outside the project, into the folder the server is started to allow.
import { pathToFileURL } from "node:url";
import path from "node:path";

const [peer, shim] = process.argv.slice(2);
const { RpcClient } = await import(pathToFileURL(path.join(peer, "node_modules/@earendil-works/pi-coding-agent/dist/modes/rpc/rpc-client.js")).href);
const client = new RpcClient({ cliPath: shim, provider: process.env.FAKE_KIND, model: "fake-model", args: ["--base-url", process.env.FAKE_URL, "--allow-path", path.dirname(process.env.EXPORT_PATH)] });
const out = {};
await client.start();
try {
  const events = await client.promptAndWait("first question");
  out.promptEvents = events.map((e) => e.type);
  await client.promptAndWait("second question");
  out.state1 = await client.getState();
  out.forkMessages = await client.getForkMessages();
  out.fork = await client.fork(out.forkMessages[1].entryId);
  out.state2 = await client.getState();
  out.switch = await client.switchSession(out.state1.sessionFile);
  out.messages = (await client.getMessages()).length;
  out.compact = await client.compact();
  out.entries = await client.getEntries();
  out.tree = await client.getTree();
  out.last = await client.getLastAssistantText();
  out.stats = await client.getSessionStats();
  out.export = await client.exportHtml(process.env.EXPORT_PATH);
  try {
    await client.exportHtml(process.env.EXPORT_PATH);
  } catch (e) {
    out.exportAgain = String(e.message);
  }
  try {
    await client.fork("nosuchid");
  } catch (e) {
    out.forkError = String(e.message);
  }
  // Settings, the person's own command, and steering mid-run.
  await client.setThinkingLevel("high");
  out.cycledLevel = await client.cycleThinkingLevel();
  await client.setSteeringMode("all");
  await client.setFollowUpMode("one-at-a-time");
  await client.setAutoCompaction(false);
  await client.setAutoRetry(false);
  await client.abortRetry();
  out.cycleModel = await client.cycleModel();
  out.commands = await client.getCommands();
  out.bash = await client.bash("echo from bash; exit 2");
  out.state3 = await client.getState();
  const idle = client.collectEvents();
  await client.prompt("third question");
  // The model's first reply runs a 2 s command: steer and follow up meanwhile.
  await new Promise((r) => setTimeout(r, 500));
  out.steer = await client.steer("also check the tests");
  out.followUp = await client.followUp("then sum up");
  out.queued = (await client.getState()).pendingMessageCount;
  out.steerEvents = (await idle).map((e) => e.type);
  out.cleared = await client.clearQueue();
} finally {
  await client.stop();
}
console.log(JSON.stringify(out));
