#!/usr/bin/env bash
# The MCP HTTP load and memory bench (issue 33): weather-mcp --http against the official
# Python SDK's server (MCPServer on uvicorn, installed from PyPI into .venv here) with the
# same get_weather, one load client (load.py), side by side in one run, loopback only.
#
#   bash bench/mcp-http/run.sh            # about a minute after the builds
#
# LOAD_SECONDS (default 4) is each throughput row's length, LOAD_FLOOD (default 2000)
# the sessions of the memory rows.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
MCP_VERSION=2.3.0

if [[ ! -x "$here/.venv/bin/python" ]] || ! "$here/.venv/bin/python" -c "import mcp" 2>/dev/null; then
  python3 -m venv "$here/.venv"
  "$here/.venv/bin/pip" install --quiet "mcp==$MCP_VERSION"
fi
cargo build --quiet --release -p weather-mcp --manifest-path "$root/Cargo.toml"

ours_port=18402
peer_port=18401
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
# The lookup delay of the demo tool is off, as the peer has none.
WEATHER_MCP_LOOKUP_DELAY_MS=0 "$root/target/release/weather-mcp" --http "127.0.0.1:$ours_port" 2>/dev/null &
pids+=($!)
ours=$!
"$here/.venv/bin/python" "$here/peer_server.py" "$peer_port" 2>/dev/null &
pids+=($!)
peer=$!
for _ in $(seq 50); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$ours_port") 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$peer_port") 2>/dev/null; then
    break
  fi
  sleep 0.2
done
echo "weather-mcp $(git -C "$root" rev-parse --short HEAD), mcp $MCP_VERSION (Python $(python3 -c 'import sys; print(sys.version.split()[0])')), $(nproc) cores"
python3 "$here/load.py" "$ours_port" "$ours" "$peer_port" "$peer"
