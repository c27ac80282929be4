#!/usr/bin/env bash
# Rebuilds the pi interop corpus in testdata/pi from pi 0.73.1 itself.
#   PEER=$(../shared/peers/pi/setup.sh) testdata/pi/tools/build.sh      (run from the repository root)
# Regenerating changes every pi-written id and timestamp, so rebuild only on purpose and commit the whole result.
set -uo pipefail
PEER=${PEER:?set PEER to the folder printed by the pi peer setup.sh}
P="$PEER/pi.mjs"
T=testdata/pi
TOOLS=$T/tools
[[ -f $P && -d $TOOLS ]] || { echo "run from the repository root with PEER set" >&2; exit 2; }
export TMPDIR=/tmp/arbor-pi-tmp   # pi.mjs leaves one mkdtemp copy per call here
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"

rm -rf "$T/sessions" "$T/expected" "$T/list" "$T/leaves.json"
mkdir -p "$T/sessions" "$T/expected" "$T/list"
W=$(mktemp -d /tmp/arbor-corpus-XXXX)
FAIL=$W/failures.txt; : > "$FAIL"

# 1. pi-generated random sessions: gen OUTDIR SEED N writes N sessions s000..; session i uses rng(seed*7919+i)
#    and 10..159 random operations.  Name: gen-s<seed>-<i>.
for spec in "1 3" "2 2" "3 2" "7 3"; do
  set -- $spec; seed=$1; n=$2
  node "$P" gen "$W/gen-$seed" "$seed" "$n" >/dev/null
  for ((i = 0; i < n; i++)); do
    cp "$W/gen-$seed/s$(printf %03d $i).jsonl" "$T/sessions/gen-s$seed-$i.jsonl"
    cp "$W/gen-$seed/expected/s$(printf %03d $i).json" "$W/gen-s$seed-$i.genexpected.json"
  done
done

# 2. hand-crafted sessions (v1, v2, v3 edge cases, damaged) and the two damaged files pi makes itself
node "$TOOLS/craft.mjs" "$T/sessions" "$W/hints.json" >/dev/null
node "$TOOLS/pimade.mjs" "$PEER" "$T/sessions" >/dev/null

# 3. one ~1 MB session written by pi
node "$P" big "$T/sessions/big-1mb.jsonl" 1 >/dev/null

# 4. expected outputs
run() { # run OUTFILE CMD... ; keeps OUTFILE only when pi exits 0 within 10 s
  local out=$1; shift
  local s=$SECONDS
  timeout 10 node "$P" "$@" > "$out.tmp" 2> "$out.err"; local rc=$?
  if [[ $rc -eq 0 ]]; then mv "$out.tmp" "$out"; rm -f "$out.err"
  else
    local why="exit $rc"; [[ $rc -eq 124 ]] && why="timeout after 10 s (hang)"
    printf '%s\t%s\t%s\n' "$(basename "$out")" "node pi.mjs $*" "$why; stderr: $(head -c 300 "$out.err" | tr '\n\t' '  ')" >> "$FAIL"
    rm -f "$out.tmp" "$out.err"
  fi
}
echo "{" > "$W/leaves.json"
first=1
for f in "$T"/sessions/*.jsonl; do
  n=$(basename "$f" .jsonl); e=$T/expected/$n
  run "$e.tree.json" tree "$f"
  run "$e.info.json" info "$f"
  hint=$(node -e 'const h=require(process.argv[1]);process.stdout.write(h[process.argv[2]]??"")' "$W/hints.json" "$n")
  [[ $n == big-1mb ]] && hint=$(sed -n 5p "$f" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).id))')
  if [[ -f $e.tree.json && -f $e.info.json ]]; then leaf=$(node "$TOOLS/chooseleaf.mjs" "$e.tree.json" "$e.info.json" $hint)
  else leaf=${hint:-ffffffff}; fi
  run "$e.context.json" context "$f"
  run "$e.context-$leaf.json" context "$f" "$leaf"
  run "$e.context-null.json" context "$f" null
  run "$e.llm.json" llm "$f"
  run "$e.prepare.json" prepare "$f"
  run "$e.prepare-2000.json" prepare "$f" 2000
  [[ $first -eq 1 ]] || echo "," >> "$W/leaves.json"; first=0
  printf '  "%s": ["%s", "null"]' "$n" "$leaf" >> "$W/leaves.json"
done
printf '\n}\n' >> "$W/leaves.json"
cp "$W/leaves.json" "$T/leaves.json"

# 5. list folders: files get pi-style names <header ts with [:.] -> ->_<session id>.jsonl
pistyle() { node -e '
  const fs=require("fs");const l=fs.readFileSync(process.argv[1],"utf8").split("\n").map(x=>{try{return JSON.parse(x)}catch{return null}}).find(x=>x&&x.type==="session");
  process.stdout.write(l?l.timestamp.replace(/[:.]/g,"-")+"_"+l.id+".jsonl":require("path").basename(process.argv[1]));' "$1"; }
mkdir -p "$T/list/basic" "$T/list/damaged"
for n in gen-s1-1 gen-s1-2 gen-s3-1 gen-s7-2 v1-basic v2-basic v3-edges v3-tree; do
  cp "$T/sessions/$n.jsonl" "$T/list/basic/$(pistyle "$T/sessions/$n.jsonl")"
done
for n in dmg-no-header dmg-nothing-parses dmg-empty dmg-blank-lines dmg-header-only dmg-garbage-first dmg-torn-tail dmg-v4 dmg-reflush-dup; do
  cp "$T/sessions/$n.jsonl" "$T/list/damaged/$n.jsonl"
done
echo "not a session: listing only looks at *.jsonl" > "$T/list/damaged/notes.txt"
run "$T/expected/list-basic.json" list "$T/list/basic"
run "$T/expected/list-damaged.json" list "$T/list/damaged"

# 6. checks: every expected file is JSON; gen's own expected files agree with the per-command outputs
for j in "$T"/expected/*.json "$T/leaves.json"; do node -e 'JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"))' "$j" || echo "INVALID JSON: $j"; done
for g in "$W"/*.genexpected.json; do
  n=$(basename "$g" .genexpected.json)
  node -e '
    const fs=require("fs");const [g,d,n]=process.argv.slice(1);const r=(f)=>JSON.parse(fs.readFileSync(d+"/"+n+"."+f+".json","utf8"));
    const G=JSON.parse(fs.readFileSync(g,"utf8"));const eq=(a,b)=>JSON.stringify(a)===JSON.stringify(b);
    const bad=[];if(!eq(G.contexts[0].context,r("context")))bad.push("context");if(!eq(G.llm,r("llm")))bad.push("llm");if(!eq(G.tree,r("tree")))bad.push("tree");
    const i=r("info");if(G.info.leafId!==i.leafId||G.info.entries!==i.entries||G.info.name!==i.name)bad.push("info");
    if(bad.length)console.log("gen expected differs for "+n+": "+bad.join(","));' "$g" "$T/expected" "$n"
done
# expected files pi could not produce: {"<expected file name>": "<command> -> <why>"}
node -e '
  const fs=require("fs");const o={};
  for(const l of fs.readFileSync(process.argv[1],"utf8").split("\n").filter(Boolean)){const [f,c,w]=l.split("\t");o[f]=c.replace(/^node pi.mjs /,"")+" -> "+w.trim();}
  fs.writeFileSync(process.argv[2],JSON.stringify(o,null,2)+"\n");' "$FAIL" "$T/missing.json"
# every session has every expected file unless missing.json lists it
node -e '
  const fs=require("fs");const T=process.argv[1];const miss=JSON.parse(fs.readFileSync(T+"/missing.json","utf8"));
  const leaves=JSON.parse(fs.readFileSync(T+"/leaves.json","utf8"));
  for(const f of fs.readdirSync(T+"/sessions")){const n=f.replace(/\.jsonl$/,"");
    for(const k of ["context","context-"+leaves[n][0],"context-null","llm","tree","info","prepare","prepare-2000"]){
      const e=n+"."+k+".json";if(!fs.existsSync(T+"/expected/"+e)&&!miss[e])console.log("MISSING "+e);}}' "$T"
rm -rf "$W" "$TMPDIR"
echo "pi could not produce:"; cat "$T/missing.json"
