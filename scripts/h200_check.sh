#!/usr/bin/env bash
# The H200 check for given puzzles: cold and warm grading of the solutions, the stubs, the bench,
# the GPU-marked tests. Run there from the project root: bash scripts/h200_check.sh 08 [more ids]
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export TILELANG_CACHE_DIR=/tmp/tilelang-cache-check
ids=("$@")
timed() {  # timed LABEL COMMAND...: run it with its output shown, then its exit code and wall time
  local label=$1; shift
  local t0=$(date +%s%N)
  "$@"; local rc=$?
  printf '>>> %-14s exit %s  wall %d ms\n' "$label" "$rc" $(( ($(date +%s%N) - t0) / 1000000 )) | tee -a "$OUT/summary.txt"
}
timed cold python -m grader "${ids[@]}" --solutions --json "$OUT/solutions.json" > "$OUT/cold.log" 2>&1
timed warm python -m grader "${ids[@]}" --solutions > "$OUT/warm.log" 2>&1
timed stubs python -m grader "${ids[@]}" > "$OUT/stubs.log" 2>&1
timed bench python -m grader "${ids[@]}" --solutions --bench > "$OUT/bench.log" 2>&1
timed gpu-tests python -m pytest -q -m gpu -p no:cacheprovider tests > "$OUT/gpu-tests.log" 2>&1
python - "$OUT/solutions.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
print("startup seconds:", [r["startup_seconds"] for r in doc["runs"]])
PY
