#!/usr/bin/env bash
# How long a user's crate with N tools takes to build with pi-tool, with rmcp, and with
# neither (the same params derives, no tool macro). README.md has the rows and results.
#
#   bash bench/compile-time/run.sh                                  # all rows, 25-40 min
#   REPS=3 NS=50 RELEASE=0 COLD200=0 bash bench/compile-time/run.sh # ~10 min
#
# Knobs (environment): OUT (${TMPDIR:-/tmp}/ctbench, never inside the project), PI_TOOL
# (this checkout's pi-tool/), NS ("50 200", tool counts of the warm rows), REPS (3), COLD
# (1: cold debug builds of N=50), EDIT (1: one-tool edit rows), RELEASE (1), COLD200 (1:
# cold builds of N=200), COLD_REPS (REPS: samples of the cold rows), WARM (1: the debug and
# check rows), COLD_RELEASE (1: time the first release build; 0 keeps a built release
# target), BUDGET_S (2100: optional phases that would end later are skipped), SUBJECTS
# ("pitool rmcp baseline"; add "core" for the same tools on pi-tool-core alone), COLD_N
# (50: the tool count of the cold rows).
# SUMMARY_ONLY=1 re-prints summary.md from $OUT/results.tsv; METRIC=cpu summarises CPU
# seconds (user + system) instead of wall seconds.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-${TMPDIR:-/tmp}/ctbench}
PI_TOOL=$(cd "${PI_TOOL:-$HERE/../../pi-tool}" && pwd)
MAIN=$(cd "$PI_TOOL/.." && pwd)
NS=${NS:-"50 200"}
REPS=${REPS:-3}
EDIT=${EDIT:-1}
RELEASE=${RELEASE:-1}
COLD=${COLD:-1}
COLD_REPS=${COLD_REPS:-$REPS}
WARM=${WARM:-1}
COLD_RELEASE=${COLD_RELEASE:-1}
COLD200=${COLD200:-1}
BUDGET_S=${BUDGET_S:-2100}
read -r -a SUBJECTS <<<"${SUBJECTS:-pitool rmcp baseline}"
COLD_N=${COLD_N:-50}

case "$OUT" in "$MAIN"|"$MAIN"/*) echo "OUT must not be inside the project" >&2; exit 2;; esac
# No caches or wrappers between cargo and rustc; cargo's default incremental settings.
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR RUSTC_WRAPPER CARGO_BUILD_RUSTC_WRAPPER \
      RUSTC_WORKSPACE_WRAPPER CARGO_INCREMENTAL RUSTFLAGS CARGO_BUILD_JOBS

summarise() { # summary.md from results.tsv and trees.tsv
python3 - "$OUT/results.tsv" "$OUT/trees.tsv" "${SUBJECTS[*]}" "${METRIC:-wall}" <<'EOF'
import csv, statistics, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
trees = {r["subject"]: r for r in csv.DictReader(open(sys.argv[2]), delimiter="\t")}
subj = sys.argv[3].split()
# wall: seconds waited; cpu: user + system seconds, which a loaded machine disturbs less.
col = "cpu_seconds" if sys.argv[4] == "cpu" else "seconds"
# The first subject is the one measured; rmcp and the baseline are what it is held against.
me = subj[0]
samples, compiled, bad, by_rep = defaultdict(list), {}, [], {}
for r in rows:
    key = (r["phase"], int(r["n"]))
    if r["status"] == "FAIL":
        bad.append(f'{r["phase"]} n={r["n"]} {r["subject"]} rep {r["rep"]}: FAILED')
        continue
    samples[key + (r["subject"],)].append(float(r[col]))
    by_rep[key + (r["subject"], r["rep"])] = float(r[col])
    if r["phase"].startswith("cold"):
        compiled[r["subject"]] = r["compiled"]
    elif int(r["compiled"]) != 1:
        bad.append(f'{r["phase"]} n={r["n"]} {r["subject"]} rep {r["rep"]}: compiled {r["compiled"]} crates (expected 1)')
order = ["cold", "touch-build", "edit-build", "touch-check", "cold-release", "touch-release"]
def spread(phase, n):
    # me/rmcp within each repetition (the two were built minutes apart at most)
    rs = sorted(by_rep[(phase, n, me, k)] / by_rep[(phase, n, "rmcp", k)]
                for (ph, nn, s, k) in by_rep if (ph, nn, s) == (phase, n, me)
                and (phase, n, "rmcp", k) in by_rep and by_rep[(phase, n, "rmcp", k)] > 0)
    return " ".join(f"{r:.2f}" for r in rs) or "-"
keys = sorted({k[:2] for k in samples}, key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1]))
print(f"{'CPU (user + system)' if col == 'cpu_seconds' else 'wall'} seconds, medians\n")
print("| measurement | N | " + " | ".join(f"{s} s" for s in subj)
      + f" | {me}/rmcp | {me}/baseline | reps | {me}/rmcp per rep |")
print("|---|---|" + "---|" * len(subj) + "---|---|---|---|")
for phase, n in keys:
    med = {s: statistics.median(samples[(phase, n, s)]) for s in subj if samples.get((phase, n, s))}
    reps = min(len(samples.get((phase, n, s), [])) for s in subj)
    cell = lambda s: f"{med[s]:.2f}" if s in med else "-"
    ratio = lambda a, b: f"{med[a] / med[b]:.2f}" if a in med and b in med and med[b] > 0 else "-"
    print(f"| {phase} | {n} | " + " | ".join(cell(s) for s in subj) + " | "
          f"{ratio(me, 'rmcp')} | {ratio(me, 'baseline')} | {reps} | {spread(phase, n)} |")
print()
print("| subject | crates in tree (cargo tree, unique) | crates compiled cold | syn | rmcp | schemars |")
print("|---|---|---|---|---|---|")
for s in subj:
    t = trees.get(s, {})
    print(f"| {s} | {t.get('crates_in_tree','-')} | {compiled.get(s,'-')} | {t.get('syn','-')} | "
          f"{t.get('rmcp','') or '-'} | {t.get('schemars','-')} |")
if bad:
    print("\nflags:")
    for b in bad:
        print("-", b)
EOF
}
if [ "${SUMMARY_ONLY:-0}" = 1 ]; then summarise | tee "$OUT/summary.md"; exit 0; fi

START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }
mkdir -p "$OUT/logs"
RES="$OUT/results.tsv"
printf 'phase\tn\tsubject\trep\tseconds\tcompiled\tstatus\tcpu_seconds\n' > "$RES"
echo "start $(date -u +%FT%TZ)  load: $(cut -d' ' -f1-3 /proc/loadavg)  nproc: $(nproc)" | tee "$OUT/run.info"
rustc --version | tee -a "$OUT/run.info"
echo "pi-tool: $PI_TOOL ($(git -C "$MAIN" rev-parse --short HEAD 2>/dev/null || echo '?'))" | tee -a "$OUT/run.info"

# --- generate, lock, fetch ------------------------------------------------------------
ns_csv=$(echo $NS $COLD_N | tr ' ' '\n' | sort -nu | paste -sd, -)
locks=()
[ -f "$MAIN/Cargo.lock" ] && locks+=(--lock-from "pitool=$MAIN/Cargo.lock" --lock-from "baseline=$MAIN/Cargo.lock")
if [ -f "$MAIN/pi-tool-mcp/Cargo.lock" ]; then locks+=(--lock-from "rmcp=$MAIN/pi-tool-mcp/Cargo.lock"); elif [ -f "$MAIN/Cargo.lock" ]; then locks+=(--lock-from "rmcp=$MAIN/Cargo.lock"); fi
locks+=(--lock-from "core=$MAIN/Cargo.lock")
subjects_csv=$(IFS=,; echo "${SUBJECTS[*]}")
python3 "$HERE/gen.py" --out "$OUT" --ns "$ns_csv" --pi-tool "$PI_TOOL" --subjects "$subjects_csv" "${locks[@]}" || exit 1
for s in "${SUBJECTS[@]}"; do
  (cd "$OUT/$s" && cargo fetch -q) || { echo "cargo fetch failed for $s" >&2; exit 1; }
done

# --- dependency trees -------------------------------------------------------------------
TREE="$OUT/trees.tsv"
printf 'subject\tcrates_in_tree\tsyn\trmcp\tschemars\n' > "$TREE"
for s in "${SUBJECTS[@]}"; do
  t=$(cd "$OUT/$s" && cargo tree --frozen -p "ct-$s-n$COLD_N" --prefix none 2>/dev/null \
        | sed -E 's/ \(\*\)$//; s/ \(proc-macro\)$//' | sort -u)
  count=$(printf '%s\n' "$t" | grep -c .)
  ver() { printf '%s\n' "$t" | awk -v c="$1" '$1==c {print $2}' | sort -u | paste -sd' ' -; }
  printf '%s\t%s\t%s\t%s\t%s\n' "$s" "$count" "$(ver syn)" "$(ver rmcp)" "$(ver schemars)" >> "$TREE"
done
column -t -s$'\t' "$TREE"

# --- measuring ------------------------------------------------------------------------
# measure PHASE N SUBJECT REP -- cargo args...: wall seconds (/usr/bin/time %e), CPU
# seconds (user + system of cargo and every rustc it ran) and the number of crates cargo
# compiled (its "Compiling"/"Checking" lines), one row of results.tsv.
measure() {
  local phase=$1 n=$2 s=$3 rep=$4; shift 5
  local log="$OUT/logs/$phase-n$n-$s-$rep.log" tf; tf=$(mktemp)
  (cd "$OUT/$s" && /usr/bin/time -f '%e %U %S' -o "$tf" cargo "$@" --frozen -p "ct-$s-n$n" >"$log" 2>&1)
  local rc=$? secs cpu; read -r secs user sys < <(tail -1 "$tf"); rm -f "$tf"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f", u + s}')
  local compiled; compiled=$(grep -cE '^ *(Compiling|Checking) ' "$log")
  local status=ok
  if [ $rc -ne 0 ]; then
    status=FAIL; echo "!! $phase n$n $s rep$rep failed (rc $rc); tail of $log:" >&2; tail -30 "$log" >&2
  elif grep -q '^warning' "$log"; then status=warn; fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$phase" "$n" "$s" "$rep" "$secs" "$compiled" "$status" "$cpu" >> "$RES"
  printf '[%5ss] %-14s n=%-3s %-8s rep %s: %6ss wall, %6ss cpu  (%s compiled, %s)\n' "$(elapsed)" "$phase" "$n" "$s" "$rep" "$secs" "$cpu" "$compiled" "$status"
}
# The subjects in rotated order for repetition REP: noise drifts hit all three alike.
order() { local r=$(( ($1 - 1) % ${#SUBJECTS[@]} )); echo "${SUBJECTS[@]:$r}" "${SUBJECTS[@]:0:$r}"; }
prime() { # unmeasured: build every member of subject $1 with cargo args "${@:2}"
  (cd "$OUT/$1" && cargo "${@:2}" --frozen --workspace >"$OUT/logs/prime-$1-$2${3:-}.log" 2>&1) \
    || { echo "!! priming $1 ($*) failed:" >&2; tail -30 "$OUT/logs/prime-$1-$2${3:-}.log" >&2; }
}
EDITS=0
edit_one() { # rewrite the literal in tool 0's body: a one-tool edit
  EDITS=$((EDITS + 1))
  sed -i -E "0,/let _edit = [0-9]+;/s//let _edit = $EDITS;/" "$OUT/$1/n$2/src/lib.rs"
}
fits() { # fits EST_SECONDS: would a phase of that length still end within BUDGET_S?
  [ $(( $(elapsed) + $1 )) -le "$BUDGET_S" ]
}

# (a) cold: full debug build from an empty target dir, N=COLD_N.
if [ "$COLD" = 1 ]; then
  for rep in $(seq 1 "$COLD_REPS"); do
    for s in $(order "$rep"); do
      rm -rf "$OUT/$s/target"
      measure cold "$COLD_N" "$s" "$rep" -- build
    done
  done
fi
cold_sum=$(awk -F'\t' -v k0=${#SUBJECTS[@]} '$1=="cold" && $5+0>0 {t+=$5; k++} END {printf "%d", (k ? t/k*k0 : 300)}' "$RES")

if [ "$WARM" = 1 ]; then
# (b) warm debug build after touch, and (b') after a one-tool edit.
for s in "${SUBJECTS[@]}"; do prime "$s" build; done
for rep in $(seq 1 "$REPS"); do
  for s in $(order "$rep"); do
    for n in $NS; do
      touch "$OUT/$s/n$n/src/lib.rs"; measure touch-build "$n" "$s" "$rep" -- build
      if [ "$EDIT" = 1 ]; then edit_one "$s" "$n"; measure edit-build "$n" "$s" "$rep" -- build; fi
    done
  done
done

# (c) warm cargo check after touch (check-mode dependencies primed first, unmeasured).
for s in "${SUBJECTS[@]}"; do prime "$s" check; done
for rep in $(seq 1 "$REPS"); do
  for s in $(order "$rep"); do
    for n in $NS; do
      touch "$OUT/$s/n$n/src/lib.rs"; measure touch-check "$n" "$s" "$rep" -- check
    done
  done
done

fi

# (d) warm release build after touch. The first release build of N=50 is measured once
# per subject (cold-release, a single sample) before the rest is primed.
if [ "$RELEASE" = 1 ] && fits $(( cold_sum * 3 )); then
  for s in "${SUBJECTS[@]}"; do
    if [ "$COLD_RELEASE" = 1 ]; then
      rm -rf "$OUT/$s/target/release"
      measure cold-release "$COLD_N" "$s" 1 -- build --release
    fi
    prime "$s" build --release
  done
  for rep in $(seq 1 "$REPS"); do
    for s in $(order "$rep"); do
      for n in $NS; do
        touch "$OUT/$s/n$n/src/lib.rs"; measure touch-release "$n" "$s" "$rep" -- build --release
      done
    done
  done
else
  echo "release phase skipped (RELEASE=$RELEASE, elapsed $(elapsed)s, budget ${BUDGET_S}s)"
fi

# (a) again for N=200, last: the costliest optional phase.
if [ "$COLD200" = 1 ] && [[ " $NS " == *" 200 "* ]]; then
  for rep in $(seq 1 "$REPS"); do
    if ! fits $(( cold_sum * 3 / 2 )); then echo "cold N=200 stopped before rep $rep (budget)"; break; fi
    for s in $(order "$rep"); do
      rm -rf "$OUT/$s/target"
      measure cold 200 "$s" "$rep" -- build
    done
  done
fi

echo "end $(date -u +%FT%TZ)  elapsed $(elapsed)s  load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/run.info"

# --- summary ----------------------------------------------------------------------------
summarise | tee "$OUT/summary.md"
