#!/usr/bin/env bash
# The one-tool edit of n200, timed with the subjects taking turns, so that a change in
# the machine's load hits all of them alike (run.sh times each subject's reps together).
#
#   bash bench/compile-time/edit-turns.sh ROUNDS DIR...
#
# Each DIR is a subject's workspace made by gen.py (`$OUT/pitool`, `$OUT/rmcp`, or a copy
# of `$OUT/pitool` whose Cargo.toml points at another pi-tool checkout). One warm-up
# build each, then ROUNDS rounds: in each, every subject changes its first tool's
# `let _edit = N;` and runs `cargo build`. Prints each subject's median and samples.
set -euo pipefail
rounds=$1
shift
declare -A samples
package() { grep -o 'ct-[a-z]*-n200' "$1/n200/Cargo.toml" | head -1; }
edit() { sed -i -E "0,/let _edit = [0-9]+;/s//let _edit = $2;/" "$1/n200/src/lib.rs"; }
for dir in "$@"; do
  edit "$dir" 1000
  cargo build -q --manifest-path "$dir/Cargo.toml" -p "$(package "$dir")"
done
for round in $(seq 1 "$rounds"); do
  for dir in "$@"; do
    edit "$dir" $((2000 + round))
    start=$(date +%s.%N)
    cargo build -q --manifest-path "$dir/Cargo.toml" -p "$(package "$dir")"
    end=$(date +%s.%N)
    samples[$dir]="${samples[$dir]:-} $(echo "$end - $start" | bc)"
  done
done
for dir in "$@"; do
  median=$(echo ${samples[$dir]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}')
  echo "$dir: median ${median} s, samples:${samples[$dir]}"
done
