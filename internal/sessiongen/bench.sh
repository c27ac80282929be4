#!/bin/bash
# Runs every read command (and outline, on a copy) on one session once under
# /usr/bin/time, as BENCHMARKS.md's "1,000,000-entry sessions" section reports.
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
run() { name=$1; shift
  for _ in $(seq "$R"); do
    /usr/bin/time -f "%e s wall, %U+%S s cpu, %M KB" -o "$T/time" "$@" > "$T/out" 2> "$T/err"; rc=$?
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
