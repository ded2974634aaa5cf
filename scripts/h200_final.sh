#!/usr/bin/env bash
# The full H200 check: every puzzle's solutions (cold, with the bench), puzzle 08 warm and cold
# alone, every stub, the simulator/GPU cross-check over references and known-wrong kernels, and a
# short sweep of matmul_tuned. Run there from the project root: bash scripts/h200_final.sh
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export TILELANG_CACHE_DIR=/tmp/tilelang-cache-final
timed() {
  local label=$1; shift
  local t0=$(date +%s%N)
  "$@"; local rc=$?
  printf '>>> %-12s exit %s  wall %d ms\n' "$label" "$rc" $(( ($(date +%s%N) - t0) / 1000000 )) | tee -a "$OUT/summary.txt"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
timed all-cold python -m grader --solutions --bench --json "$OUT/solutions.json" > "$OUT/solutions.log" 2>&1
timed p08-warm python -m grader 08 --solutions > /dev/null 2>&1
timed p08-cold env TILELANG_CACHE_DIR=/tmp/tilelang-cache-p08 python -m grader 08 --solutions > /dev/null 2>&1
timed stubs python -m grader --json "$OUT/stubs.json" > "$OUT/stubs.log" 2>&1
timed crosscheck python scripts/crosscheck.py --wrong > "$OUT/crosscheck.log" 2>&1
timed sweep python scripts/sweep.py 08 matmul_tuned large_4096 '{}' '{"STAGES": 3}' '{"PANEL": 4}' '{"PANEL": 16}' \
  '{"BLOCK_M": 256, "BLOCK_N": 128}' > "$OUT/sweep.log" 2>&1
python - "$OUT" <<'PY'
import json, sys, collections
out = sys.argv[1]
for name in ("solutions", "stubs"):
    doc = json.load(open(f"{out}/{name}.json"))
    print(name, doc["summary"])
    bad = [(r["puzzle"], r["kernel"], r["case"], r["status"], r["message"][:90]) for r in doc["results"]
           if (name == "solutions" and r["status"] != "passed") or (name == "stubs" and r["status"] != "not_implemented")]
    for row in bad:
        print("  ", *row)
PY
grep -A40 -- "- bench -" "$OUT/solutions.log" | head -45
grep -c "verdicts differ" "$OUT/crosscheck.log"; grep -E "differ|CRASH|unsupported|error" "$OUT/crosscheck.log" | head -30
tail -3 "$OUT/sweep.log"
cat "$OUT/summary.txt"
