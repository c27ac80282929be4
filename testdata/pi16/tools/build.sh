#!/usr/bin/env bash
# Rebuilds the pi 1.6.0 interop corpus in testdata/pi16 from pi 1.6.0 itself.
#   PEER=$(../shared/peers/pi16/setup.sh) testdata/pi16/tools/build.sh      (run from the repository root)
# Regenerating changes every pi-written id and timestamp, so rebuild only on purpose and commit the whole result.
set -uo pipefail
PEER=${PEER:?set PEER to the folder printed by the pi 1.6.0 peer setup.sh}
P="$PEER/pi.mjs"
T=testdata/pi16
[[ -f $P && -d $T/tools ]] || { echo "run from the repository root with PEER set" >&2; exit 2; }
export TMPDIR=/tmp/arbor-pi16-tmp   # pi.mjs leaves one mkdtemp copy per call here
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
rm -rf "$T/sessions" "$T/expected" "$T/list" "$T/leaves.json"
mkdir -p "$T/sessions" "$T/expected" "$T/list"
W=$(mktemp -d /tmp/arbor-pi16-XXXX)

# 1. gen16 OUTDIR SEED N: N random sessions using everything new in 1.6.0. Name: n-s<seed>-<i>.
for spec in "1 5" "2 4" "5 4" "11 4"; do
  set -- $spec; seed=$1; n=$2
  node "$P" gen16 "$W/gen-$seed" "$seed" "$n" >/dev/null || exit 1
  for ((i = 0; i < n; i++)); do
    cp "$W/gen-$seed/n$(printf %03d $i).jsonl" "$T/sessions/n-s$seed-$i.jsonl"
    cp "$W/gen-$seed/expected/n$(printf %03d $i).json" "$W/n-s$seed-$i.gen.json"
  done
done

# 2. the leaves gen16 chose (its own leaf, two random entries, the entry before the last context edit)
node -e '
  const fs=require("fs");const W=process.argv[1];const o={};
  for(const f of fs.readdirSync(W).filter(f=>f.endsWith(".gen.json")).sort()){
    const g=JSON.parse(fs.readFileSync(W+"/"+f,"utf8"));o[f.replace(/\.gen\.json$/,"")]=[...new Set(g.contexts.map(c=>c.leaf).filter(l=>l!==null))];}
  fs.writeFileSync(process.argv[2],JSON.stringify(o,null,2)+"\n");' "$W" "$T/leaves.json"

# 3. every expected output, one pi.mjs call each (two at a time)
jobs=$W/jobs.txt; : > "$jobs"
for f in "$T"/sessions/*.jsonl; do
  n=$(basename "$f" .jsonl); e=$T/expected/$n
  echo "$e.context.json context $f" >> "$jobs"
  echo "$e.llm.json llm $f" >> "$jobs"
  echo "$e.tree.json tree $f" >> "$jobs"
  echo "$e.info.json info $f" >> "$jobs"
  echo "$e.system.json system $f" >> "$jobs"
  echo "$e.projection.json projection $f" >> "$jobs"
  echo "$e.usage.json usage $f" >> "$jobs"
  echo "$e.context-null.json context $f null" >> "$jobs"
  for keep in 20000 4000 1000 100; do echo "$e.prepare-$keep.json prepare $f $keep" >> "$jobs"; done
  for leaf in $(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"))[process.argv[2]].join(" "))' "$T/leaves.json" "$n"); do
    echo "$e.context-$leaf.json context $f $leaf" >> "$jobs"
    echo "$e.llm-$leaf.json llm $f $leaf" >> "$jobs"
    echo "$e.system-$leaf.json system $f $leaf" >> "$jobs"
    echo "$e.projection-$leaf.json projection $f $leaf" >> "$jobs"
    for keep in 20000 4000 1000 100; do echo "$e.prepare-$keep-$leaf.json prepare $f $keep $leaf" >> "$jobs"; done
  done
done
export P
xargs -P 2 -L 1 sh -c 'out=$0; timeout 20 node "$P" "$@" > "$out" || { echo "FAILED: $0 $*" >&2; rm -f "$out"; }' < "$jobs"

# 4. listing: copies under pi-style names <header timestamp with [:.] -> ->_<session id>.jsonl
mkdir -p "$T/list/gen16"
for f in "$T"/sessions/n-s1-*.jsonl "$T"/sessions/n-s2-*.jsonl; do
  name=$(head -1 "$f" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const h=JSON.parse(s);process.stdout.write(h.timestamp.replace(/[:.]/g,"-")+"_"+h.id+".jsonl")})')
  cp "$f" "$T/list/gen16/$name"
done
node "$P" list "$T/list/gen16" > "$T/expected/list-gen16.json"

# 5. checks: gen16's own expected values agree with the per-command outputs
for g in "$W"/*.gen.json; do
  node -e '
    const fs=require("fs");const [g,d,n]=process.argv.slice(1);const r=(f)=>JSON.parse(fs.readFileSync(d+"/"+n+"."+f+".json","utf8"));
    const G=JSON.parse(fs.readFileSync(g,"utf8"));const eq=(a,b)=>JSON.stringify(a)===JSON.stringify(b);const bad=[];
    for(const c of G.contexts){if(!eq(c.context,r(c.leaf===null?"context":"context-"+c.leaf)))bad.push("context "+c.leaf);}
    if(!eq(G.llm,r("llm")))bad.push("llm");if(!eq(G.tree,r("tree")))bad.push("tree");if(!eq(G.usage,r("usage")))bad.push("usage");
    for(const p of G.prepare){if(!eq(p.plan,r("prepare-"+p.keep+(p.leaf===null?"":"-"+p.leaf))))bad.push("prepare "+p.keep+" "+p.leaf);}
    for(const s of G.system){const x=r(s.leaf===null?"system":"system-"+s.leaf);if(!eq(s.message,x.message)||s.text!==x.text)bad.push("system "+s.leaf);}
    if(bad.length)console.log("gen16 expected differs for "+n+": "+bad.join(", "));' "$g" "$T/expected" "$(basename "$g" .gen.json)"
done
rm -rf "$W" "$TMPDIR"
