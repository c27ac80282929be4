#!/bin/bash
# Runs every read command, then every write command (on copies) and the agent
# opening the session, on one session once under /usr/bin/time, as
# BENCHMARKS.md's "1,000,000-entry sessions" section reports.
# usage: internal/sessiongen/bench.sh ARBOR FILE [RUNS]
#   FILE from: go run ./internal/sessiongen/gensession ... > FILE
#   ls and search run on a folder holding only FILE.
set -u
A=$1; F=$2; R=${3:-1}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
export ARBOR_DIR=$T/arbor
mkdir -p "$T/dir" && ln "$F" "$T/dir/" 2>/dev/null || cp "$F" "$T/dir/"
D=$T/dir
MID=$(sed -n 500000p "$F" | sed 's/.*"id":"\([0-9a-f]*\)".*/\1/' | head -c 8)
run() { name=$1; shift; runin "$name" /dev/null "$@"; }
runin() { name=$1; in=$2; shift 2
  for _ in $(seq "$R"); do
    /usr/bin/time -f "%e s wall, %U+%S s cpu, %M KB" -o "$T/time" "$@" < "$in" > "$T/out" 2> "$T/err"; rc=$?
    echo "$name | rc=$rc | $(tail -1 "$T/time") | $(stat -c %s "$T/out") B"
  done; }
run "context --json" "$A" context "$F" --json
run "context" "$A" context "$F"
run "context --format llm" "$A" context "$F" --format llm
run "context --budget 100000" "$A" context "$F" --budget 100000
run "tree" "$A" tree "$F"
run "tree --json" "$A" tree "$F" --json
run "info" "$A" info "$F"
run "info --json" "$A" info "$F" --json
run "stats" "$A" stats "$F"
run "stats --json" "$A" stats "$F" --json
run "fsck" "$A" fsck "$F"
run "show (the 500,000th line's entry)" "$A" show "$F" "$MID"
run "compact --dry-run" "$A" compact "$F" --dry-run
run "ls" "$A" ls --session-dir "$D"
run "search (first: builds the index)" "$A" search --session-dir "$D" scanner
run "search" "$A" search --session-dir "$D" zanzibar
cp "$F" "$T/copy.jsonl"
run "outline (a write, on a copy)" "$A" outline "$T/copy.jsonl" "$MID"

# Writes, each on a copy (C; the copy grows by a line or two a command).
mkdir -p "$T/x" "$T/w"; C=$T/w/copy.jsonl; cp "$F" "$C"
run "export (html, to a file)" "$A" export "$F" "$T/x/out.html" --force
run "export --format md" "$A" export "$F" "$T/x/out.md" --format md --force
run "export --format jsonl" "$A" export "$F" "$T/x/out.jsonl" --format jsonl --force
rm -f "$T/x/"*
run "fork (the leaf)" "$A" fork "$C"; rm -f "$(cat "$T/out")"
run "fork --leaf (the 500,000th line's entry)" "$A" fork "$C" --leaf "$MID"; rm -f "$(cat "$T/out")"
echo '{"role":"user","content":"one more","timestamp":1764442800000}' > "$T/msg"
runin "append (one message)" "$T/msg" "$A" append "$C"
run "name" "$A" name "$C"
run "name NAME" "$A" name "$C" "a million"
run "rename" "$A" rename "$C" "a million entries"
run "label" "$A" label "$C" "$MID" here
run "pin" "$A" pin "$C" "$MID"
run "unpin" "$A" unpin "$C" "$MID"
run "summarize" "$A" summarize "$C" "$MID"
run "edit --omit" "$A" edit "$C" "$MID" --omit
run "cursor ls" "$A" cursor ls "$C"
run "cursor new" "$A" cursor new "$C" review
LEAF=$("$A" info "$C" --json | sed -n 's/.*"leaf": *"\([0-9a-f]*\)".*/\1/p' | head -1)
run "branch (the 500,000th line's entry)" "$A" branch "$C" "$MID"
run "branch (back to the leaf)" "$A" branch "$C" "$LEAF"
run "compact (mechanical summary)" "$A" compact "$C"
run "compact --undo" "$A" compact "$C" --undo
cp "$F" "$C"; printf '{"type":"message","id":"torn' >> "$C"; touch -d '1 minute ago' "$C"
run "fsck --repair (a torn last line)" "$A" fsck "$C" --repair
rm -f "$C".torn
run "index --rebuild" "$A" index --rebuild --session-dir "$T/w"
run "latest" "$A" latest --session-dir "$T/w"
run "archive" "$A" archive "$C"
run "unarchive" "$A" unarchive "$C"
run "rm" "$A" rm "$C"
run "restore" "$A" restore "$C"
# The agent opening the session; --mode rpc and serve make no request.
P="--provider openai --base-url http://127.0.0.1:9/v1 --model m"
printf '%s\n' '{"id":"1","type":"get_state"}' '{"id":"2","type":"get_messages"}' > "$T/rpc"
runin "--mode rpc --session (get_state, get_messages)" "$T/rpc" "$A" --mode rpc --session "$C" $P
# serve answers requests concurrently: getState and getMessages are sent once
# resumeSession is answered, as a client that wants them of that session does.
serve_in() {
  printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resumeSession\",\"params\":{\"path\":\"$C\"}}"
  until grep -qs '"id":1,' "$T/out"; do sleep 0.05; done
  printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"getState"}' '{"jsonrpc":"2.0","id":3,"method":"getMessages"}'
}
for _ in $(seq "$R"); do
  rm -f "$T/out" "$T/serve"; mkfifo "$T/serve"; serve_in > "$T/serve" &
  R=1 runin "serve (resumeSession, then getState, getMessages)" "$T/serve" "$A" serve $P
  wait
done
echo hello > "$T/prompt"
# -p sends its request to a provider that reads the body whole and answers
# 400 (internal/sessiongen/sink), so the whole body is made and sent.
# go build takes a package's relative path only with ./ first: made absolute.
go build -o "$T/sink" "$(cd "$(dirname "$0")" && pwd)/sink" || exit 1
"$T/sink" "$T/sink.url" 2> "$T/sink.log" & SINK=$!
until [ -s "$T/sink.url" ]; do sleep 0.05; done
for pr in openai anthropic; do
  url=$(cat "$T/sink.url"); [ $pr = openai ] && url=$url/v1
  ARBOR_API_KEY=x runin "-p --session, $pr (the whole request sent, answered 400)" "$T/prompt" "$A" -p --session "$C" --provider $pr --base-url "$url" --model m
  echo "   $(tail -1 "$T/sink.log")"
done
kill $SINK
