#!/bin/bash
# Opens FILE in `arbor browse` in a 120×35 tmux window and prints the
# process's VmHWM (peak RSS) and VmRSS after each step: the tree drawn,
# scrolled, the search `scanner` typed, edited (two backspaces, `er2`) and
# cleared (Esc), as BENCHMARKS.md's "arbor browse on 1,000,000 entries" reports.
# usage: internal/sessiongen/browse.sh ARBOR FILE
set -u
A=$1; F=$2
T=$(mktemp -d); S=$T/tmux.sock
trap 'tmux -S "$S" kill-server 2>/dev/null; rm -rf "$T"' EXIT
export ARBOR_DIR=$T/arbor
tmux -S "$S" new-session -d -x 120 -y 35 "exec $A browse $F"
sleep 1
P=$(tmux -S "$S" display -p '#{pane_pid}')
mem() { echo "$1: $(awk '/VmHWM|VmRSS/{printf "%s %s KB  ", $1, $2}' "/proc/$P/status")"; }
waitfor() { for _ in $(seq 1200); do tmux -S "$S" capture-pane -p | grep -q "$1" && return 0; sleep 0.1; done; echo "timeout waiting for $1"; }
now() { date +%s.%N; }
t0=$(now); waitfor "entries"; waitfor "/[0-9]*)"
echo "tree drawn after $(echo "$(now) - $t0" | bc) s"; mem drawn
tmux -S "$S" send-keys Home; sleep 0.5
for _ in $(seq 20); do tmux -S "$S" send-keys PageDown; done
tmux -S "$S" send-keys End; sleep 1; mem scrolled
tmux -S "$S" send-keys -l scanner; waitfor "Search: scanner"
until tmux -S "$S" capture-pane -p | tail -1 | grep -q "(1/"; do sleep 0.05; done
mem "search scanner"
tmux -S "$S" send-keys BSpace BSpace; waitfor "Search: scann$"
tmux -S "$S" send-keys -l er2; waitfor "Search: scanner2"; sleep 1; mem "search edited"
tmux -S "$S" send-keys Escape; waitfor "Type to search"; sleep 1; mem cleared
