#!/usr/bin/env bash
# The MCP floor bench (issue 34): one `get_weather` call (a) in process through
# CallPolicy::call, (b) McpToolset -> weather-mcp, (c) rmcp's client -> rmcp-weather
# (rmcp's macros alone), (d) a bare JSON-RPC client -> jsonrpc-echo, over stdio and over
# streamable HTTP on loopback, alternated in one run; then 100 calls at once on one
# connection. The last line is JSON (bench/README.md, "MCP at the floor").
#
#   bash bench/mcp-floor/run.sh [CALLS] [ROUNDS] [BURSTS]     (defaults 200 10 30)
#   target/release/mcp-floor --only b-stdio 20000             (one side, for a profiler)
#
# Before and after a change, in one run: copy the four binaries of the earlier build
# (target/release/{mcp-floor,weather-mcp,rmcp-weather,jsonrpc-echo}) into a directory
# and pass it as BEFORE=DIR; the two builds then run in turns, REPEAT times each
# (default 2), and the last line holds every run's summary.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --quiet --release -p weather-mcp -p mcp-floor-bench
echo "main $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ -z "${BEFORE:-}" ]]; then
  target/release/mcp-floor "$@"
  exit
fi
runs=()
for _ in $(seq "${REPEAT:-2}"); do
  for build in "$BEFORE" target/release; do
    echo "== $build"
    summary=$("$build/mcp-floor" "$@" | tee /dev/stderr | tail -1)
    runs+=("{\"build\":\"$build\",\"summary\":$summary}")
  done
done
(IFS=,; echo "[${runs[*]}]")
