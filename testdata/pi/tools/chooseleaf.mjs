// Picks the second leaf used for expected/<name>.context-<LEAF>.json from pi's own tree and info output.
//   node chooseleaf.mjs TREE.json INFO.json [HINT]
// Preference: an entry with children on a branch other than the current path (a mid-path entry of another branch);
// else an entry with children on the current path; else "ffffffff" (an id that does not exist).
import { readFileSync } from "node:fs";
const [treeF, infoF, hint] = process.argv.slice(2);
if (hint) { console.log(hint); process.exit(0); }
const tree = JSON.parse(readFileSync(treeF, "utf8"));
const info = JSON.parse(readFileSync(infoF, "utf8"));
const onPath = new Set();
const walk = (nodes, stack) => {
  for (const n of nodes) {
    stack.push(n.id);
    if (n.id === info.leafId) stack.forEach((id) => onPath.add(id));
    walk(n.children, stack);
    stack.pop();
  }
};
walk(tree, []);
const off = [], on = [];
const collect = (nodes, depth) => {
  for (const n of nodes) {
    if (n.children.length > 0) (onPath.has(n.id) ? on : off).push({ id: n.id, depth, type: n.type });
    collect(n.children, depth + 1);
  }
};
collect(tree, 0);
const pick = (arr) => {
  const msgs = arr.filter((x) => x.type === "message");
  const a = msgs.length ? msgs : arr;
  a.sort((x, y) => x.depth - y.depth);
  return a[Math.floor(a.length / 2)].id;
};
console.log(off.length ? pick(off) : on.length ? pick(on) : "ffffffff");
