#!/usr/bin/env bash
# The full H200 check, in two parts that each fit one 10-minute device call. From the project root:
#   bash scripts/h200_final.sh a   # every solution cold with --bench; every stub; the p08 notebook
#   bash scripts/h200_final.sh b   # simulator/GPU cross-check; GPU-marked tests (wrong kernels, adversarial)
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
if [ "${1:-a}" = a ]; then
  timed all-cold timeout 420 python -m grader --solutions --bench --json "$OUT/solutions.json" > "$OUT/solutions.log" 2>&1
  # The GPU is free for timing again: the stubs (CPU work) and the notebook run side by side.
  timed stubs timeout 150 python -m grader --json "$OUT/stubs.json" > "$OUT/stubs.log" 2>&1 &
  timed notebook08 timeout 160 python scripts/run_notebook.py 08 --solutions --out "$OUT/nb08" > "$OUT/nb08.log" 2>&1
  wait
  python - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
for name in ("solutions", "stubs"):
    try:
        doc = json.load(open(f"{out}/{name}.json"))
    except Exception as error:
        print(name, "no JSON:", error); continue
    print(name, doc["summary"])
    for r in doc["results"]:
        bad = r["status"] != "passed" if name == "solutions" else r["status"] != "not_implemented"
        if bad:
            print("  ", r["puzzle"], r["kernel"], r["case"], r["status"], r["message"][:100])
PY
  sed -n '/bench/,$p' "$OUT/solutions.log" | head -60
  tail -25 "$OUT/nb08.log"
else
  timed crosscheck timeout 560 python scripts/crosscheck.py --wrong > "$OUT/crosscheck.log" 2>&1 &
  timed gpu-tests timeout 560 python -m pytest -q -m gpu -n 6 -p no:cacheprovider tests/test_grader_e2e.py tests/test_adversarial.py > "$OUT/gpu_tests.log" 2>&1
  wait
  tail -15 "$OUT/gpu_tests.log"
  grep -E "differ|CRASH|unsupported" "$OUT/crosscheck.log" | head -30
fi
cat "$OUT/summary.txt"
