#!/bin/bash
# Runs one command with each of several arbor binaries in turn, N rounds, and
# prints each binary's median wall and CPU time (user+sys) and highest peak
# RSS: on a shared machine only runs next to each other compare. BENCHMARKS.md's
# alternating figures come from it.
# usage: [PREP='shell'] internal/sessiongen/alt.sh N 'COMMAND with %A for the binary' ARBOR...
#   PREP runs before every run, untimed (a fresh copy or folder).
#   internal/sessiongen/alt.sh 5 '%A stats chain1m.jsonl' /tmp/arbor-before /tmp/arbor-now
set -u
N=$1; CMD=$2; shift 2
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
for _ in $(seq "$N"); do
  for b in "$@"; do
    [ -n "${PREP:-}" ] && bash -c "$PREP"
    /usr/bin/time -f "%e %U %S %M" -o "$T/t" bash -c "${CMD//%A/$b}" > /dev/null 2>&1 < /dev/null
    echo "$b $(tail -1 "$T/t")" >> "$T/all"
  done
done
python3 - "$T/all" <<'PY'
import statistics as st, sys
runs = {}
for line in open(sys.argv[1]):
    b, wall, user, system, rss = line.split()
    runs.setdefault(b, []).append((float(wall), float(user) + float(system), int(rss)))
for b, v in runs.items():
    print(f"{b}: wall median {st.median(r[0] for r in v):.2f} s (min {min(r[0] for r in v):.2f}), "
          f"CPU median {st.median(r[1] for r in v):.2f} s (min {min(r[1] for r in v):.2f}), "
          f"peak RSS {max(r[2] for r in v):,} KB, {len(v)} runs")
PY
