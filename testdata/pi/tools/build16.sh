#!/usr/bin/env bash
# What pi 1.6.0 plans on the 0.73.1 corpus: for every expected/<name>.prepare[-KEEP].json under testdata/pi and
# compaction/testdata/pi, writes expected16/<same name> with `pi.mjs prepare FILE KEEP` of the pi 1.6.0 peer.
#   PEER16=$(../shared/peers/pi16/setup.sh) testdata/pi/tools/build16.sh      (run from the repository root)
set -uo pipefail
P="${PEER16:?set PEER16 to the folder printed by the pi 1.6.0 peer setup.sh}/pi.mjs"
export TMPDIR=/tmp/arbor-pi16-tmp && rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
for T in testdata/pi compaction/testdata/pi; do
  rm -rf "$T/expected16" && mkdir -p "$T/expected16"
  for f in "$T"/expected/*.prepare*.json; do
    b=$(basename "$f" .json); n=${b%%.prepare*}; k=${b#*.prepare}; k=${k#-}; [[ -z $k ]] && k=20000
    timeout 20 node "$P" prepare "$T/sessions/$n.jsonl" "$k" > "$T/expected16/$b.json" || { echo "FAILED: $b" >&2; rm -f "$T/expected16/$b.json"; }
  done
done
rm -rf "$TMPDIR"
# listings of the same folders by pi 1.6.0 (listAll(DIR))
for n in basic damaged; do node "$P" list "testdata/pi/list/$n" > "testdata/pi/expected16/list-$n.json"; done
