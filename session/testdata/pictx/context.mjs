// Prints pi 0.73.1's buildSessionContext() for each file named on the command
// line, one JSON line per file, as SessionManager builds it after opening the
// file (leaf = its last entry). Reads only; never writes the files.
//   node context.mjs PI_ROOT FILE...
const [root, ...files] = process.argv.slice(2);
const sm = await import(`${root}/node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js`);
for (const f of files) {
  const entries = sm.loadEntriesFromFile(f);
  sm.migrateSessionEntries(entries);
  const body = entries.filter((e) => e.type !== "session");
  console.log(JSON.stringify(sm.buildSessionContext(body)));
}
