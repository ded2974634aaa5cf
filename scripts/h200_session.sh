#!/usr/bin/env bash
# One device call that checks and measures everything puzzle 08 needs on the H200.
# Run there from the project root: bash scripts/h200_session.sh  (writes logs under $OUT)
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export TILELANG_CACHE_DIR=/tmp/tilelang-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
step() {  # step NAME COMMAND...: run, keep the log, print wall time and exit code
  local name=$1; shift
  local t0=$(date +%s%N)
  "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  local t1=$(date +%s%N)
  printf "%-22s exit %s  wall %d ms\n" "$name" "$rc" $(( (t1 - t0) / 1000000 )) | tee -a "$OUT/summary.txt"
}
step solutions_cold python -m grader 08 --solutions --json "$OUT/solutions.json"
step solutions_warm python -m grader 08 --solutions
step stubs python -m grader 08
step bench python -m grader 08 --solutions --bench
step tune python scripts/tune_p08.py
wrong=(); for f in tests/wrong/p08/*.py; do wrong+=(--grade "08=$PWD/$f"); done
step wrong python -m pytest -p grader.plugin -p no:cacheprovider -c grader/pytest.ini -q --tb=no \
  "${wrong[@]}" --grade-json "$OUT/wrong.json" tests/wrong/p08
cat "$OUT/summary.txt"
