#!/usr/bin/env bash
# The kernel sandbox's cost per call against no sandbox and against bubblewrap, in one
# run (pi-tool-core/examples/sandbox_overhead.rs says what each side does).
#   bench/sandbox/run.sh [CALLS]      (default 200; needs `bwrap`: apt-get install bubblewrap)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo run --quiet --release -p pi-tool-core --example sandbox_overhead -- "${1:-200}"
