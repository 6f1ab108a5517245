#!/usr/bin/env bash
# One run, side by side: N approval cycles (interrupt, checkpoint, resume, finish) on
# SQLite with pi-tool (pi-tool-store's `interrupt_cycles` example, release build) and
# with LangGraph (langgraph + langgraph-checkpoint-sqlite, bench/durable/langgraph_interrupt.py),
# and the ratio of their medians (bench/README.md, "Durable runs").
#
#   bench/durable/compare-langgraph.sh [CYCLES]     (default 300)
#
# LangGraph comes from PyPI into a virtualenv ($LANGGRAPH_VENV, default
# ${TMPDIR:-/tmp}/pi-tool-langgraph-venv), created on first use.
set -euo pipefail
cd "$(dirname "$0")/../.."
cycles=${1:-300}
venv=${LANGGRAPH_VENV:-${TMPDIR:-/tmp}/pi-tool-langgraph-venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q langgraph langgraph-checkpoint-sqlite
fi
lg_version=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("langgraph"), m.version("langgraph-checkpoint-sqlite"))')
cargo build -q --release -p pi-tool-store --example interrupt_cycles
rust=$(target/release/examples/interrupt_cycles "$cycles")
python=$("$venv/bin/python" bench/durable/langgraph_interrupt.py "$cycles")
echo "$rust"
echo "$python"
python3 - "$rust" "$python" "$lg_version" <<'PY'
import json, sys
rust, lg = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"langgraph {sys.argv[3]} (langgraph, langgraph-checkpoint-sqlite)")
print(f"median per approval cycle: pi-tool {rust['median_us']} us, LangGraph {lg['median_us']} us; "
      f"LangGraph / pi-tool = {lg['median_us'] / rust['median_us']:.2f}")
PY
