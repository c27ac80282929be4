// Regenerates expected.jsonl with pi's own convertToLlm (one message per line in, one per line out):
//   node gen.mjs /tmp/peers/pi-0.73.1 < input.jsonl > expected.jsonl
const root = process.argv[2];
const { convertToLlm } = await import(`${root}/node_modules/@mariozechner/pi-coding-agent/dist/core/messages.js`);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const msgs = input.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
process.stdout.write(convertToLlm(msgs).map((m) => JSON.stringify(m)).join("\n") + "\n");
