#!/usr/bin/env bash
# Runs the fuzz targets one after another and writes a summary line per target.
#
#   bash fuzz/run-long.sh [target...]     every target (or those named), each until
#                                         FUZZ_RUNS executions (10 000 000) or
#                                         FUZZ_SECONDS seconds (3600), whichever is first
#
# Output, under FUZZ_RUNS_DIR (default /tmp/fuzz-runs):
#   <target>.log       libFuzzer's output
#   summary.txt        one line per target: target, executions, seconds, crashes
#   corpus/<target>/   what the run added to the committed corpus (fuzz/corpus/<target>/
#                      is only read; copy finds worth keeping there by hand)
#   artifacts/<target>/  crash-*, timeout-*, oom-* inputs (replay: cargo +nightly fuzz
#                      run -s none -a <target> <file>)
#
# Exits 1 when any target crashed, so CI (.ci/run: FUZZ_SECONDS=30) fails on a crash.
# Runs at nice 19 in one libFuzzer process (libFuzzer's default: one job, one worker), so
# it can run in the background of a shared machine:
#   nohup setsid bash fuzz/run-long.sh >/tmp/fuzz-runs/driver.log 2>&1 &
set -uo pipefail
cd "$(dirname "$0")"

runs=${FUZZ_RUNS:-10000000}
seconds=${FUZZ_SECONDS:-3600}
out=${FUZZ_RUNS_DIR:-/tmp/fuzz-runs}
# cargo-fuzz from .ci/run's install location, if it is there.
export PATH="$PWD/../target/tools/bin:$PATH"
# With the workspace's other build outputs (CI caches target/).
target_dir="$PWD/../target/fuzz"
# -s none: the code under test is safe Rust, so AddressSanitizer would only halve the
# speed; a stack overflow still aborts (Rust's guard page) and libFuzzer reports it.
# -a: debug assertions and overflow checks on, as in the test profile.
flags=(+nightly fuzz build -s none -a --target-dir "$target_dir")

if (($# > 0)); then
  targets=("$@")
else
  mapfile -t targets < <(cargo +nightly fuzz list)
fi

mkdir -p "$out"
echo "building ${targets[*]}"
# Built once, then each binary runs as built: `cargo fuzz run` would rebuild whenever a
# source changed, and every target of one run tests the same tree.
if ! nice -n 19 cargo "${flags[@]}" >"$out/build.log" 2>&1; then
  cat "$out/build.log" >&2
  echo "cargo fuzz build failed" >&2
  exit 1
fi
host=$(rustc +nightly -vV | sed -n 's/^host: //p')
bin="$target_dir/$host/release"

crashed=()
for target in "${targets[@]}"; do
  mkdir -p "$out/corpus/$target" "$out/artifacts/$target"
  start=$(date +%s)
  echo "$(date -u +%H:%M:%S) $target: up to $runs executions or $seconds s"
  # The first corpus directory receives new inputs; the committed one is only read.
  nice -n 19 "$bin/$target" "$out/corpus/$target" "corpus/$target" \
    -runs="$runs" -max_total_time="$seconds" -max_len=8192 -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/artifacts/$target/" \
    >"$out/$target.log" 2>&1
  status=$?
  elapsed=$(($(date +%s) - start))
  executions=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$out/$target.log" | tail -1 | grep -o '[0-9]*$')
  if [[ -z "$executions" ]]; then
    # A crash ends the run before the final stats: its last status line counts.
    executions=$(grep -o '^#[0-9]*' "$out/$target.log" | tail -1 | tr -d '#')
  fi
  # Not slow-unit-* (libFuzzer's note of an input over 10 s, which is no failure).
  crashes=$(find "$out/artifacts/$target" -type f \( -name 'crash-*' -o -name 'timeout-*' \
    -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
  line="$target executions=${executions:-0} seconds=$elapsed crashes=$crashes exit=$status"
  echo "$line" | tee -a "$out/summary.txt"
  if ((crashes > 0 || status != 0)); then
    crashed+=("$target")
    grep -m 20 -E 'panicked|ERROR|SUMMARY|overflow|Test unit written' "$out/$target.log" >&2 || true
  fi
done

if ((${#crashed[@]})); then
  echo "crashed: ${crashed[*]} (inputs under $out/artifacts/)" >&2
  exit 1
fi
